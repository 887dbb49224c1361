// AVX2 kernels (rgbd_kernels.h). Each function is compiled for AVX2 by its target
// attribute alone; this file needs no compiler flag, and the rest of the program stays
// baseline x86-64.
#include "rgbd_kernels.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <cpuid.h>
#include <immintrin.h>
#include <string.h>

int rgbd_kernels_have_avx2(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    // AVX and OSXSAVE, then the OS must save the YMM registers (XCR0 bits 1 and 2).
    if (!(c & bit_AVX) || !(c & bit_OSXSAVE)) return 0;
    unsigned xcr0_low, xcr0_high;
    __asm__ volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
    (void)xcr0_high;
    if ((xcr0_low & 6) != 6) return 0;
    if (__get_cpuid_max(0, NULL) < 7) return 0;
    __cpuid_count(7, 0, a, b, c, d);
    return (b & bit_AVX2) != 0;
}

/// The direct kernels' limits as (x, y) pairs in 16-bit lanes: a neighborhood at
/// (x0, y0) is inside when 0 <= x0 < x_limit and 0 <= y0 < height - 1.
__attribute__((target("avx2"), always_inline))
static inline __m256i direct_limits(int x_limit, int height) {
    return _mm256_set1_epi32((int)((uint32_t)(uint16_t)x_limit | ((uint32_t)(uint16_t)(height - 1) << 16)));
}

/// The (x, y) pairs in 16-bit lanes of pixels x0 ... x0 + 7 of row y (the map words' layout).
__attribute__((target("avx2"), always_inline))
static inline __m256i direct_base(int x0, int y) {
    const short xs = (short)x0, ys = (short)y;
    return _mm256_setr_epi16(xs, ys, (short)(xs + 1), ys, (short)(xs + 2), ys, (short)(xs + 3), ys,
                             (short)(xs + 4), ys, (short)(xs + 5), ys, (short)(xs + 6), ys, (short)(xs + 7), ys);
}

/// The 8 bytes at `base + o0`, `+ o1` in the low 128-bit lane, at `+ o2`, `+ o3` in the
/// high one.
__attribute__((target("avx2"), always_inline))
static inline __m256i pair_lanes(const uint8_t *base, int32_t o0, int32_t o1, int32_t o2, int32_t o3) {
    int64_t v0, v1, v2, v3;
    memcpy(&v0, base + o0, 8);
    memcpy(&v1, base + o1, 8);
    memcpy(&v2, base + o2, 8);
    memcpy(&v3, base + o3, 8);
    return _mm256_setr_epi64x(v0, v1, v2, v3);
}

/// Eight color pixels (3 or 4 bytes each; `o`: the byte offsets of their neighborhoods,
/// `wt`, `wb`: their weight pairs (w00, w10) and (w01, w11) as 32-bit lanes) interpolated
/// as Σ w·s and rounded, 4 bytes per pixel in pixel order (RGB: the fourth byte zero).
/// Each pixel's two neighbors in a row are one 8-byte load; byte shuffles make them
/// (left, right) 16-bit pairs per channel, which meet their weights in one multiply-add
/// of pairs per row.
__attribute__((target("avx2"), always_inline))
static inline __m256i color_pixels(const uint8_t *src, ptrdiff_t row_bytes, const int32_t o[8], __m256i wt, __m256i wb,
                                   int pixel_bytes) {
    const uint8_t *below = src + row_bytes;
    // Pixels 0, 1, 4, 5 in one vector and 2, 3, 6, 7 in another: each 128-bit lane's two
    // pixels then meet their weights by in-lane shuffles. Scalar loads: AVX2's gathers
    // were slower here.
    const __m256i top0 = pair_lanes(src, o[0], o[1], o[4], o[5]);
    const __m256i top1 = pair_lanes(src, o[2], o[3], o[6], o[7]);
    const __m256i bottom0 = pair_lanes(below, o[0], o[1], o[4], o[5]);
    const __m256i bottom1 = pair_lanes(below, o[2], o[3], o[6], o[7]);
    // (left, right) pairs per channel of a lane's first pixel, then of its second.
    const __m256i first = pixel_bytes == 4
        ? _mm256_setr_epi8(0, -1, 4, -1, 1, -1, 5, -1, 2, -1, 6, -1, 3, -1, 7, -1,
                           0, -1, 4, -1, 1, -1, 5, -1, 2, -1, 6, -1, 3, -1, 7, -1)
        : _mm256_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1,
                           0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
    const __m256i second = pixel_bytes == 4
        ? _mm256_setr_epi8(8, -1, 12, -1, 9, -1, 13, -1, 10, -1, 14, -1, 11, -1, 15, -1,
                           8, -1, 12, -1, 9, -1, 13, -1, 10, -1, 14, -1, 11, -1, 15, -1)
        : _mm256_setr_epi8(8, -1, 11, -1, 9, -1, 12, -1, 10, -1, 13, -1, -1, -1, -1, -1,
                           8, -1, 11, -1, 9, -1, 12, -1, 10, -1, 13, -1, -1, -1, -1, -1);
    const __m256i round = _mm256_set1_epi32(1 << 13);
    // Σ w·s per channel: pixels (0 | 4), (1 | 5), (2 | 6), (3 | 7) in the two lanes.
    __m256i s0 = _mm256_add_epi32(_mm256_madd_epi16(_mm256_shuffle_epi8(top0, first), _mm256_shuffle_epi32(wt, 0x00)),
                                  _mm256_madd_epi16(_mm256_shuffle_epi8(bottom0, first), _mm256_shuffle_epi32(wb, 0x00)));
    __m256i s1 = _mm256_add_epi32(_mm256_madd_epi16(_mm256_shuffle_epi8(top0, second), _mm256_shuffle_epi32(wt, 0x55)),
                                  _mm256_madd_epi16(_mm256_shuffle_epi8(bottom0, second), _mm256_shuffle_epi32(wb, 0x55)));
    __m256i s2 = _mm256_add_epi32(_mm256_madd_epi16(_mm256_shuffle_epi8(top1, first), _mm256_shuffle_epi32(wt, 0xAA)),
                                  _mm256_madd_epi16(_mm256_shuffle_epi8(bottom1, first), _mm256_shuffle_epi32(wb, 0xAA)));
    __m256i s3 = _mm256_add_epi32(_mm256_madd_epi16(_mm256_shuffle_epi8(top1, second), _mm256_shuffle_epi32(wt, 0xFF)),
                                  _mm256_madd_epi16(_mm256_shuffle_epi8(bottom1, second), _mm256_shuffle_epi32(wb, 0xFF)));
    s0 = _mm256_srli_epi32(_mm256_add_epi32(s0, round), 14);
    s1 = _mm256_srli_epi32(_mm256_add_epi32(s1, round), 14);
    s2 = _mm256_srli_epi32(_mm256_add_epi32(s2, round), 14);
    s3 = _mm256_srli_epi32(_mm256_add_epi32(s3, round), 14);
    // Packed in lane: pixels 0 1 2 3 in the low lane, 4 5 6 7 in the high one.
    return _mm256_packus_epi16(_mm256_packs_epi32(s0, s1), _mm256_packs_epi32(s2, s3));
}

/// Stores eight pixels from `color_pixels`: 32 bytes, or for RGB exactly 24.
__attribute__((target("avx2"), always_inline))
static inline void store_pixels(uint8_t *out, __m256i pixels, int pixel_bytes) {
    if (pixel_bytes == 4) {
        _mm256_storeu_si256((__m256i *)(void *)out, pixels);
        return;
    }
    const __m256i rgb = _mm256_shuffle_epi8(pixels, _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
                                                                     0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1));
    const __m128i low = _mm256_castsi256_si128(rgb), high = _mm256_extracti128_si256(rgb, 1);
    _mm_storeu_si128((__m128i *)(void *)out, low);  // its last 4 bytes are overwritten next
    _mm_storel_epi64((__m128i *)(void *)(out + 12), high);
    const int32_t last = _mm_extract_epi32(high, 2);
    memcpy(out + 20, &last, 4);
}

/// rgbd_sample3_direct_avx2 and rgbd_sample4_direct_avx2 (`pixel_bytes` 3 or 4).
__attribute__((target("avx2"), always_inline))
static inline ptrdiff_t sample_direct(ptrdiff_t count, const void *words, int y, int x0, const uint8_t *src,
                                      int width, int height, ptrdiff_t row_bytes, uint8_t *out, int pixel_bytes) {
    // An 8-byte load at x reads pixels x and x + 1 (RGB: and two bytes more).
    const __m256i limits = direct_limits(pixel_bytes == 4 ? width - 1 : width - 2, height);
    // Byte offsets are one multiply-add of (x, y) with (pixel bytes, row_bytes).
    const __m256i strides = _mm256_set1_epi32((int)((uint32_t)pixel_bytes | ((uint32_t)row_bytes << 16)));
    __m256i base = direct_base(x0, y);
    const __m256i step = _mm256_set1_epi32(8);  // +8 on x, +0 on y
    const __m256i zero = _mm256_setzero_si256();
    const __m256i low8 = _mm256_set1_epi16(255);
    const __m256i one16 = _mm256_set1_epi16(1);
    const __m256i low16 = _mm256_set1_epi32(0xFFFF);
    const __m256i w128 = _mm256_set1_epi32(128);
    const uint8_t *map = (const uint8_t *)words;

    ptrdiff_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m256i w = _mm256_loadu_si256((const __m256i *)(const void *)(map + 4 * i));
        const __m256i p = _mm256_add_epi16(_mm256_srai_epi16(w, 8), base);
        const __m256i inside = _mm256_andnot_si256(_mm256_cmpgt_epi16(zero, p), _mm256_cmpgt_epi16(limits, p));
        if (_mm256_movemask_epi8(inside) != -1) break;
        base = _mm256_add_epi16(base, step);
        int32_t o[8];
        _mm256_storeu_si256((__m256i *)(void *)o, _mm256_madd_epi16(p, strides));

        // Fractions ((d & 255) + 1) >> 1 (0...128) of dx and dy; weight pairs per pixel:
        // wt = (128 - fx, fx)·(128 - fy) for the top row, wb = (128 - fx, fx)·fy.
        const __m256i f = _mm256_srli_epi16(_mm256_add_epi16(_mm256_and_si256(w, low8), one16), 1);
        const __m256i fx = _mm256_and_si256(f, low16), fy = _mm256_srli_epi32(f, 16);
        const __m256i horizontal = _mm256_or_si256(_mm256_sub_epi32(w128, fx), _mm256_slli_epi32(fx, 16));
        const __m256i wb = _mm256_mullo_epi16(horizontal, _mm256_or_si256(fy, _mm256_slli_epi32(fy, 16)));
        const __m256i wt = _mm256_sub_epi16(_mm256_slli_epi16(horizontal, 7), wb);
        store_pixels(out + pixel_bytes * i, color_pixels(src, row_bytes, o, wt, wb, pixel_bytes), pixel_bytes);
    }
    return i;
}

__attribute__((target("avx2")))
ptrdiff_t rgbd_sample3_direct_avx2(ptrdiff_t count, const void *words, int y, int x0, const uint8_t *src,
                                   int width, int height, ptrdiff_t row_bytes, uint8_t *out) {
    return sample_direct(count, words, y, x0, src, width, height, row_bytes, out, 3);
}

__attribute__((target("avx2")))
ptrdiff_t rgbd_sample4_direct_avx2(ptrdiff_t count, const void *words, int y, int x0, const uint8_t *src,
                                   int width, int height, ptrdiff_t row_bytes, uint8_t *out) {
    return sample_direct(count, words, y, x0, src, width, height, row_bytes, out, 4);
}

__attribute__((target("avx2")))
ptrdiff_t rgbd_sample3_prepared_avx2(ptrdiff_t count, const int32_t *offsets, const uint32_t *top,
                                     const uint32_t *bottom, const uint8_t *fast, const uint8_t *src,
                                     ptrdiff_t row_bytes, uint8_t *out) {
    ptrdiff_t i = 0;
    for (; i + 8 <= count; i += 8) {
        if (!fast[i / 4] || !fast[i / 4 + 1]) break;
        const __m256i wt = _mm256_loadu_si256((const __m256i *)(const void *)(top + i));
        const __m256i wb = _mm256_loadu_si256((const __m256i *)(const void *)(bottom + i));
        store_pixels(out + 3 * i, color_pixels(src, row_bytes, offsets + i, wt, wb, 3), 3);
    }
    return i;
}

/// The smallest and the largest of eight 16-bit lanes (unsigned).
__attribute__((target("avx2"), always_inline))
static inline void lanes_min_max(__m128i v, int *smallest, int *largest) {
    *smallest = _mm_cvtsi128_si32(_mm_minpos_epu16(v)) & 0xFFFF;
    *largest = 0xFFFF - (_mm_cvtsi128_si32(_mm_minpos_epu16(_mm_xor_si128(v, _mm_set1_epi16(-1)))) & 0xFFFF);
}

/// 16 bytes from `bytes`, unaligned.
__attribute__((target("avx2"), always_inline))
static inline __m128i load16(const uint8_t *bytes) {
    return _mm_loadu_si128((const __m128i *)(const void *)bytes);
}

/// Sixteen 16-bit lanes in pixel order from two vectors of 32-bit lanes (pixels 0...7 and
/// 8...15), each lane's value fitting 16 bits signed.
__attribute__((target("avx2"), always_inline))
static inline __m256i lanes_16(__m256i first, __m256i second) {
    return _mm256_permute4x64_epi64(_mm256_packs_epi32(first, second), 0xD8);
}

__attribute__((target("avx2")))
ptrdiff_t rgbd_sample1_direct_avx2(ptrdiff_t count, const void *words, int y, int x0, const uint8_t *src,
                                   int width, int height, ptrdiff_t row_bytes, uint8_t *out) {
    const __m256i limits = direct_limits(width - 1, height);
    __m256i base = direct_base(x0, y);
    const __m256i step = _mm256_set1_epi32(8);
    const __m256i zero = _mm256_setzero_si256();
    const __m256i low8 = _mm256_set1_epi16(255);
    const __m256i one16 = _mm256_set1_epi16(1);
    const __m256i low16 = _mm256_set1_epi32(0xFFFF);
    const __m256i w128 = _mm256_set1_epi16(128);
    const __m256i round = _mm256_set1_epi32(1 << 13);
    const uint8_t *map = (const uint8_t *)words;

    ptrdiff_t i = 0;
    for (; i + 16 <= count; i += 16) {
        const __m256i w0 = _mm256_loadu_si256((const __m256i *)(const void *)(map + 4 * i));
        const __m256i w1 = _mm256_loadu_si256((const __m256i *)(const void *)(map + 4 * i + 32));
        const __m256i p0 = _mm256_add_epi16(_mm256_srai_epi16(w0, 8), base);
        const __m256i p1 = _mm256_add_epi16(_mm256_srai_epi16(w1, 8), _mm256_add_epi16(base, step));
        const __m256i inside = _mm256_and_si256(
            _mm256_andnot_si256(_mm256_cmpgt_epi16(zero, p0), _mm256_cmpgt_epi16(limits, p0)),
            _mm256_andnot_si256(_mm256_cmpgt_epi16(zero, p1), _mm256_cmpgt_epi16(limits, p1)));
        if (_mm256_movemask_epi8(inside) != -1) break;

        // The sixteen pixels' integer parts and fractions ((d & 255) + 1) >> 1, each in
        // sixteen 16-bit lanes in pixel order.
        const __m256i X = lanes_16(_mm256_and_si256(p0, low16), _mm256_and_si256(p1, low16));
        const __m256i Y = lanes_16(_mm256_srai_epi32(p0, 16), _mm256_srai_epi32(p1, 16));
        const __m256i f0 = _mm256_srli_epi16(_mm256_add_epi16(_mm256_and_si256(w0, low8), one16), 1);
        const __m256i f1 = _mm256_srli_epi16(_mm256_add_epi16(_mm256_and_si256(w1, low8), one16), 1);
        const __m256i fx = lanes_16(_mm256_and_si256(f0, low16), _mm256_and_si256(f1, low16));
        const __m256i fy = lanes_16(_mm256_srli_epi32(f0, 16), _mm256_srli_epi32(f1, 16));

        // Pixels 0...7 (the low 128-bit lanes) and 8...15 (the high ones) each have their
        // neighborhoods in a window 16 bytes wide of two or three source rows (the usual
        // case: a lens moves neighboring pixels alike), read with three loads and picked
        // by byte shuffles; otherwise Swift does this group.
        int xa_min, xa_max, ya_min, ya_max, xb_min, xb_max, yb_min, yb_max;
        lanes_min_max(_mm256_castsi256_si128(X), &xa_min, &xa_max);
        lanes_min_max(_mm256_extracti128_si256(X, 1), &xb_min, &xb_max);
        lanes_min_max(_mm256_castsi256_si128(Y), &ya_min, &ya_max);
        lanes_min_max(_mm256_extracti128_si256(Y, 1), &yb_min, &yb_max);
        if (xa_max - xa_min > 14 || ya_max - ya_min > 1 || xa_min + 16 > width ||
            xb_max - xb_min > 14 || yb_max - yb_min > 1 || xb_min + 16 > width) break;
        base = _mm256_add_epi16(base, _mm256_add_epi16(step, step));

        // Rows y_min, y_min + 1 and, only when some pixel's bottom neighbors are on it,
        // y_min + 2 (else y_min + 1 again).
        const uint8_t *wa = src + (ptrdiff_t)ya_min * row_bytes + xa_min;
        const uint8_t *wb = src + (ptrdiff_t)yb_min * row_bytes + xb_min;
        const __m256i rows0 = _mm256_set_m128i(load16(wb), load16(wa));
        const __m256i rows1 = _mm256_set_m128i(load16(wb + row_bytes), load16(wa + row_bytes));
        const __m256i rows2 = _mm256_set_m128i(load16(wb + (yb_max - yb_min + 1) * row_bytes),
                                               load16(wa + (ya_max - ya_min + 1) * row_bytes));
        // Byte indices into the windows, as 16-bit lanes whose high byte (0x80) makes the
        // shuffles zero-extend; and which pixels have their top neighbors on the second row.
        const __m256i mins = _mm256_set_m128i(_mm_set1_epi16((short)xb_min), _mm_set1_epi16((short)xa_min));
        const __m256i rowMins = _mm256_set_m128i(_mm_set1_epi16((short)yb_min), _mm_set1_epi16((short)ya_min));
        const __m256i leftIndex = _mm256_or_si256(_mm256_sub_epi16(X, mins), _mm256_set1_epi16((short)0x8000));
        const __m256i rightIndex = _mm256_add_epi16(leftIndex, one16);
        const __m256i lower = _mm256_cmpeq_epi16(_mm256_sub_epi16(Y, rowMins), one16);
        const __m256i tl = _mm256_blendv_epi8(_mm256_shuffle_epi8(rows0, leftIndex), _mm256_shuffle_epi8(rows1, leftIndex), lower);
        const __m256i tr = _mm256_blendv_epi8(_mm256_shuffle_epi8(rows0, rightIndex), _mm256_shuffle_epi8(rows1, rightIndex), lower);
        const __m256i bl = _mm256_blendv_epi8(_mm256_shuffle_epi8(rows1, leftIndex), _mm256_shuffle_epi8(rows2, leftIndex), lower);
        const __m256i br = _mm256_blendv_epi8(_mm256_shuffle_epi8(rows1, rightIndex), _mm256_shuffle_epi8(rows2, rightIndex), lower);

        // Along x in 16-bit lanes (at most 255·128), then (top, bottom) pairs times
        // (128 - fy, fy): Σ w·s as the Swift loops compute it.
        const __m256i gx = _mm256_sub_epi16(w128, fx), gy = _mm256_sub_epi16(w128, fy);
        const __m256i top = _mm256_add_epi16(_mm256_mullo_epi16(tl, gx), _mm256_mullo_epi16(tr, fx));
        const __m256i bottom = _mm256_add_epi16(_mm256_mullo_epi16(bl, gx), _mm256_mullo_epi16(br, fx));
        __m256i a = _mm256_madd_epi16(_mm256_unpacklo_epi16(top, bottom), _mm256_unpacklo_epi16(gy, fy));
        __m256i b = _mm256_madd_epi16(_mm256_unpackhi_epi16(top, bottom), _mm256_unpackhi_epi16(gy, fy));
        a = _mm256_srli_epi32(_mm256_add_epi32(a, round), 14);
        b = _mm256_srli_epi32(_mm256_add_epi32(b, round), 14);
        const __m256i words16 = _mm256_packs_epi32(a, b);  // pixels 0...7 | 8...15
        const __m256i bytes = _mm256_permute4x64_epi64(_mm256_packus_epi16(words16, words16), 0x08);
        _mm_storeu_si128((__m128i *)(void *)(out + i), _mm256_castsi256_si128(bytes));
    }
    return i;
}

__attribute__((target("avx2")))
ptrdiff_t rgbd_paeth_filter_avx2(const uint8_t *row, const uint8_t *above, ptrdiff_t bpp, uint8_t *out,
                                 ptrdiff_t start, ptrdiff_t count) {
    ptrdiff_t i = start;
    for (; i + 32 <= count; i += 32) {
        const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(row + i - bpp));
        const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(above + i));
        const __m256i c = _mm256_loadu_si256((const __m256i *)(const void *)(above + i - bpp));
        const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(row + i));
        // With p = a + b - c: pa = |p - a| = |b - c|, pb = |p - b| = |a - c|, and
        // pc = |p - c| = |(b - c) + (a - c)|: pa + pb when b - c and a - c have the same
        // sign, else |pa - pb|. The sum saturates at 255, where it still compares right
        // (it is then at least both pa and pb). Where b = c or a = c either form is right.
        const __m256i maxBC = _mm256_max_epu8(b, c), maxAC = _mm256_max_epu8(a, c);
        const __m256i pa = _mm256_sub_epi8(maxBC, _mm256_min_epu8(b, c));
        const __m256i pb = _mm256_sub_epi8(maxAC, _mm256_min_epu8(a, c));
        const __m256i bAtLeastC = _mm256_cmpeq_epi8(maxBC, b), aAtLeastC = _mm256_cmpeq_epi8(maxAC, a);
        const __m256i differ = _mm256_xor_si256(bAtLeastC, aAtLeastC);
        const __m256i sum = _mm256_adds_epu8(pa, pb);
        const __m256i difference = _mm256_sub_epi8(_mm256_max_epu8(pa, pb), _mm256_min_epu8(pa, pb));
        const __m256i pc = _mm256_blendv_epi8(sum, difference, differ);
        const __m256i minBC = _mm256_min_epu8(pb, pc);
        const __m256i useB = _mm256_cmpeq_epi8(minBC, pb);                        // pb <= pc
        const __m256i useA = _mm256_cmpeq_epi8(_mm256_min_epu8(pa, minBC), pa);   // pa <= pb, pc
        const __m256i predictor = _mm256_blendv_epi8(_mm256_blendv_epi8(c, b, useB), a, useA);
        _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm256_sub_epi8(x, predictor));
    }
    return i;
}

/// Eight chroma samples at `p` (4:2:0, one per two pixels of a row) minus 128, as lanes.
__attribute__((target("avx2"), always_inline))
static inline __m256i chroma_eight(const uint8_t *p) {
    return _mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p)),
                            _mm256_set1_epi32(128));
}

/// One row's sixteen pixels: luma `y` (16 bytes) plus the chroma contributions of their
/// eight chroma samples, each already repeated for its two pixels (red, green, blue; 8 +
/// 8 lanes), to 48 bytes of RGB at `out`.
__attribute__((target("avx2"), always_inline))
static inline void ycbcr_sixteen(const uint8_t *y, __m256i red_lo, __m256i red_hi, __m256i green_lo,
                                 __m256i green_hi, __m256i blue_lo, __m256i blue_hi, __m256i luma_scale,
                                 __m256i luma_offset, uint8_t *out) {
    const __m128i luma = _mm_loadu_si128((const __m128i *)(const void *)y);
    const __m256i l_lo = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_cvtepu8_epi32(luma), luma_scale), luma_offset);
    const __m256i l_hi = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(luma, 8)), luma_scale),
                                          luma_offset);
    // (l + contribution) >> 16, saturated to [0, 255] by the two packs, in pixel order.
#define RGBD_CHANNEL(lo, hi, name)                                                                           \
    const __m256i name##16 = _mm256_permute4x64_epi64(                                                       \
        _mm256_packs_epi32(_mm256_srai_epi32(_mm256_add_epi32(l_lo, lo), 16),                                \
                           _mm256_srai_epi32(_mm256_add_epi32(l_hi, hi), 16)), 0xD8);                        \
    const __m128i name = _mm_packus_epi16(_mm256_castsi256_si128(name##16), _mm256_extracti128_si256(name##16, 1));
    RGBD_CHANNEL(red_lo, red_hi, r)
    RGBD_CHANNEL(green_lo, green_hi, g)
    RGBD_CHANNEL(blue_lo, blue_hi, b)
#undef RGBD_CHANNEL
    // Interleaved by byte shuffles: output byte k is channel k % 3 of pixel k / 3.
    static const int8_t masks[3][3][16] = {
        {{0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1, 5},
         {-1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1},
         {-1, -1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1}},
        {{-1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1, 10, -1},
         {5, -1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1, 10},
         {-1, 5, -1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1}},
        {{-1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15, -1, -1},
         {-1, -1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15, -1},
         {10, -1, -1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15}},
    };
    for (int j = 0; j < 3; j++) {
        const __m128i part = _mm_or_si128(
            _mm_or_si128(_mm_shuffle_epi8(r, _mm_loadu_si128((const __m128i *)(const void *)masks[j][0])),
                         _mm_shuffle_epi8(g, _mm_loadu_si128((const __m128i *)(const void *)masks[j][1]))),
            _mm_shuffle_epi8(b, _mm_loadu_si128((const __m128i *)(const void *)masks[j][2])));
        _mm_storeu_si128((__m128i *)(void *)(out + 16 * j), part);
    }
}

__attribute__((target("avx2")))
ptrdiff_t rgbd_ycbcr420_rows_avx2(ptrdiff_t count, const uint8_t *y0, const uint8_t *y1, const uint8_t *cb,
                                  const uint8_t *cr, uint8_t *out0, uint8_t *out1, const int32_t *coefficients) {
    const __m256i luma_scale = _mm256_set1_epi32(coefficients[0]);
    const __m256i luma_offset = _mm256_set1_epi32(coefficients[1]);
    const __m256i red_cr = _mm256_set1_epi32(coefficients[2]);
    const __m256i green_cb = _mm256_set1_epi32(coefficients[3]);
    const __m256i green_cr = _mm256_set1_epi32(coefficients[4]);
    const __m256i blue_cb = _mm256_set1_epi32(coefficients[5]);
    const __m256i first = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
    const __m256i second = _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7);
    ptrdiff_t x = 0;
    for (; x + 16 <= count; x += 16) {
        const __m256i u = chroma_eight(cb + x / 2), v = chroma_eight(cr + x / 2);
        const __m256i red = _mm256_mullo_epi32(v, red_cr);
        const __m256i green = _mm256_add_epi32(_mm256_mullo_epi32(u, green_cb), _mm256_mullo_epi32(v, green_cr));
        const __m256i blue = _mm256_mullo_epi32(u, blue_cb);
        const __m256i red_lo = _mm256_permutevar8x32_epi32(red, first), red_hi = _mm256_permutevar8x32_epi32(red, second);
        const __m256i green_lo = _mm256_permutevar8x32_epi32(green, first);
        const __m256i green_hi = _mm256_permutevar8x32_epi32(green, second);
        const __m256i blue_lo = _mm256_permutevar8x32_epi32(blue, first);
        const __m256i blue_hi = _mm256_permutevar8x32_epi32(blue, second);
        ycbcr_sixteen(y0 + x, red_lo, red_hi, green_lo, green_hi, blue_lo, blue_hi, luma_scale, luma_offset,
                      out0 + 3 * x);
        if (y1) {
            ycbcr_sixteen(y1 + x, red_lo, red_hi, green_lo, green_hi, blue_lo, blue_hi, luma_scale, luma_offset,
                          out1 + 3 * x);
        }
    }
    return x;
}

/* ---- TSDF integration of one block (Swift: TSDFVolume.integrateBlock) -------------------
 * A row of a block is eight voxels along x: one AVX2 lane each. Every operation is the
 * Swift loop's, in its order, one IEEE float operation at a time (no FMA: the target is
 * avx2 alone), so the bytes are the same. Voxels are 8 bytes; a row is 64 bytes, loaded
 * as two vectors of four voxels and split into their first words (tsdf | weight << 16)
 * and second words (red | green << 8 | blue << 16 | color weight << 24). */
__attribute__((target("avx2")))
int rgbd_tsdf_block_avx2(const rgbd_tsdf_frame *frame, float origin_x, float origin_y, float origin_z, void *voxels) {
    const __m256 fx = _mm256_set1_ps(frame->fx), fy = _mm256_set1_ps(frame->fy);
    const __m256 cx = _mm256_set1_ps(frame->cx), cy = _mm256_set1_ps(frame->cy);
    const __m256 width_f = _mm256_set1_ps((float)frame->width), height_f = _mm256_set1_ps((float)frame->height);
    const __m256i width_i = _mm256_set1_epi32(frame->width);
    const __m256 trunc = _mm256_set1_ps(frame->trunc), neg_trunc = _mm256_set1_ps(-frame->trunc);
    const __m256 trunc_inv = _mm256_set1_ps(frame->trunc_inv);
    const __m256 range_inv = _mm256_set1_ps(frame->range_inv);
    const float *bands = frame->bands;
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f);
    const __m256 minus_half = _mm256_set1_ps(-0.5f);
    const __m256 xs = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 sxx = _mm256_set1_ps(frame->step_x[0]), sxy = _mm256_set1_ps(frame->step_x[1]);
    const __m256 sxz = _mm256_set1_ps(frame->step_x[2]);
    const __m256 tsdf_scale = _mm256_set1_ps(32767.0f), tsdf_max = _mm256_set1_ps(32767.0f);
    const __m256 tsdf_min = _mm256_set1_ps(-32767.0f);
    const __m256 weight_scale = _mm256_set1_ps(256.0f), color_scale = _mm256_set1_ps(16.0f);
    const __m256 max_weight = _mm256_set1_ps(65280.0f), max_byte = _mm256_set1_ps(255.0f);
    const __m256i ones_i = _mm256_set1_epi32(1), low16 = _mm256_set1_epi32(0xFFFF), low8 = _mm256_set1_epi32(0xFF);
    const __m256i three = _mm256_set1_epi32(3);
    uint8_t *rows = (uint8_t *)voxels;
    for (int z = 0; z < 8; z++) {
        for (int y = 0; y < 8; y++) {
            /* The row's base point, component by component as Swift's SIMD3 arithmetic. */
            const float bx = (origin_x + frame->step_z[0] * (float)z) + frame->step_y[0] * (float)y;
            const float by = (origin_y + frame->step_z[1] * (float)z) + frame->step_y[1] * (float)y;
            const float bz = (origin_z + frame->step_z[2] * (float)z) + frame->step_y[2] * (float)y;
            const __m256 px = _mm256_add_ps(_mm256_set1_ps(bx), _mm256_mul_ps(sxx, xs));
            const __m256 py = _mm256_add_ps(_mm256_set1_ps(by), _mm256_mul_ps(sxy, xs));
            const __m256 pz = _mm256_add_ps(_mm256_set1_ps(bz), _mm256_mul_ps(sxz, xs));
            __m256 active = _mm256_cmp_ps(pz, zero, _CMP_GT_OQ);
            if (_mm256_movemask_ps(active) == 0) continue;
            const __m256 z_inv = _mm256_div_ps(one, pz);
            const __m256 u = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(fx, px), z_inv), cx), half);
            const __m256 v = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(fy, py), z_inv), cy), half);
            active = _mm256_and_ps(active, _mm256_cmp_ps(u, zero, _CMP_GE_OQ));
            active = _mm256_and_ps(active, _mm256_cmp_ps(v, zero, _CMP_GE_OQ));
            active = _mm256_and_ps(active, _mm256_cmp_ps(u, width_f, _CMP_LT_OQ));
            active = _mm256_and_ps(active, _mm256_cmp_ps(v, height_f, _CMP_LT_OQ));
            if (_mm256_movemask_ps(active) == 0) continue;
            /* Inactive lanes may hold any value: index 0 there, and masked gathers. */
            __m256i pixel = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_cvttps_epi32(v), width_i), _mm256_cvttps_epi32(u));
            pixel = _mm256_and_si256(pixel, _mm256_castps_si256(active));
            const __m256 measured = _mm256_mask_i32gather_ps(zero, frame->depth, pixel, active, 4);
            const __m256 weight = _mm256_mask_i32gather_ps(zero, frame->weights, pixel, active, 4);
            active = _mm256_and_ps(active, _mm256_cmp_ps(measured, zero, _CMP_GT_OQ));
            active = _mm256_and_ps(active, _mm256_cmp_ps(weight, zero, _CMP_GT_OQ));
            const __m256 sdf = _mm256_sub_ps(measured, pz);
            __m256 observed;
            if (bands) {
                /* The pixel's own band: the distance kept in meters (/ the range) up to it. */
                const __m256 band = _mm256_mask_i32gather_ps(trunc, bands, pixel, active, 4);
                active = _mm256_and_ps(active, _mm256_cmp_ps(sdf, _mm256_sub_ps(zero, band), _CMP_GE_OQ));
                if (_mm256_movemask_ps(active) == 0) continue;
                observed = _mm256_mul_ps(_mm256_min_ps(sdf, band), range_inv);
            } else {
                active = _mm256_and_ps(active, _mm256_cmp_ps(sdf, neg_trunc, _CMP_GE_OQ));
                if (_mm256_movemask_ps(active) == 0) continue;
                observed = _mm256_min_ps(_mm256_mul_ps(sdf, trunc_inv), one);
            }

            uint8_t *row = rows + 64 * (z * 8 + y);
            const __m256 a = _mm256_loadu_ps((const float *)(const void *)row);
            const __m256 b = _mm256_loadu_ps((const float *)(const void *)(row + 32));
            const __m256i w0 = _mm256_permute4x64_epi64(_mm256_castps_si256(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))),
                                                        _MM_SHUFFLE(3, 1, 2, 0));
            const __m256i w1 = _mm256_permute4x64_epi64(_mm256_castps_si256(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))),
                                                        _MM_SHUFFLE(3, 1, 2, 0));
            const __m256 old_tsdf = _mm256_cvtepi32_ps(_mm256_srai_epi32(_mm256_slli_epi32(w0, 16), 16));
            const __m256 old = _mm256_cvtepi32_ps(_mm256_srli_epi32(w0, 16));
            const __m256 add = _mm256_cvtepi32_ps(_mm256_max_epi32(
                _mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(weight, weight_scale), half)), ones_i));
            const __m256 total = _mm256_add_ps(old, add);
            const __m256 total_inv = _mm256_div_ps(one, total);
            const __m256 mean = _mm256_mul_ps(_mm256_add_ps(_mm256_mul_ps(old_tsdf, old),
                                                            _mm256_mul_ps(_mm256_mul_ps(observed, tsdf_scale), add)), total_inv);
            const __m256 rounded = _mm256_add_ps(mean, _mm256_blendv_ps(half, minus_half, _mm256_cmp_ps(mean, zero, _CMP_LT_OQ)));
            /* Swift: max(-32767, min(32767, r)); minps/maxps return their second operand on ties. */
            const __m256 clamped = _mm256_max_ps(_mm256_min_ps(rounded, tsdf_max), tsdf_min);
            const __m256i new_tsdf = _mm256_and_si256(_mm256_cvttps_epi32(clamped), low16);
            const __m256i new_weight = _mm256_cvttps_epi32(_mm256_min_ps(total, max_weight));
            __m256i n0 = _mm256_or_si256(new_tsdf, _mm256_slli_epi32(new_weight, 16));
            n0 = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(w0), _mm256_castsi256_ps(n0), active));
            __m256i n1 = w1;
            const __m256 colored = _mm256_and_ps(_mm256_and_ps(active, _mm256_cmp_ps(sdf, trunc, _CMP_LT_OQ)),
                                                 _mm256_cmp_ps(sdf, neg_trunc, _CMP_GE_OQ));
            if (frame->colors && _mm256_movemask_ps(colored) != 0) {
                const __m256i rgb = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), (const int *)(const void *)frame->colors,
                                                                _mm256_mullo_epi32(pixel, three),
                                                                _mm256_castps_si256(colored), 1);
                const __m256 old_c = _mm256_cvtepi32_ps(_mm256_srli_epi32(w1, 24));
                const __m256 add_c = _mm256_cvtepi32_ps(_mm256_max_epi32(
                    _mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(weight, color_scale), half)), ones_i));
                const __m256 color_inv = _mm256_div_ps(one, _mm256_add_ps(old_c, add_c));
                __m256i mixed = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_add_ps(old_c, add_c), max_byte));
                mixed = _mm256_slli_epi32(mixed, 24);
                for (int channel = 0; channel < 3; channel++) {
                    const __m256 previous = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(w1, 8 * channel), low8));
                    const __m256 seen = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(rgb, 8 * channel), low8));
                    const __m256 value = _mm256_add_ps(_mm256_mul_ps(_mm256_add_ps(_mm256_mul_ps(previous, old_c),
                                                                                   _mm256_mul_ps(seen, add_c)), color_inv), half);
                    const __m256i byte = _mm256_cvttps_epi32(_mm256_min_ps(value, max_byte));
                    mixed = _mm256_or_si256(mixed, _mm256_slli_epi32(byte, 8 * channel));
                }
                n1 = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(w1), _mm256_castsi256_ps(mixed), colored));
            }
            /* Back to voxel order: undo the 64-bit permutation, then interleave the words. */
            const __m256 q0 = _mm256_castsi256_ps(_mm256_permute4x64_epi64(n0, _MM_SHUFFLE(3, 1, 2, 0)));
            const __m256 q1 = _mm256_castsi256_ps(_mm256_permute4x64_epi64(n1, _MM_SHUFFLE(3, 1, 2, 0)));
            _mm256_storeu_ps((float *)(void *)row, _mm256_unpacklo_ps(q0, q1));
            _mm256_storeu_ps((float *)(void *)(row + 32), _mm256_unpackhi_ps(q0, q1));
        }
    }
    return 1;
}

__attribute__((target("avx2")))
ptrdiff_t rgbd_depth_units_avx2(ptrdiff_t count, const uint8_t *smooth, const float *top, const float *bottom,
                                const float *nearest, float b, float inverse_b, double scale, uint16_t *out) {
    const __m256 vb = _mm256_set1_ps(b), vib = _mm256_set1_ps(inverse_b), one = _mm256_set1_ps(1.0f);
    const __m256 zero = _mm256_setzero_ps();
    const __m256d vscale = _mm256_set1_pd(scale), half = _mm256_set1_pd(0.5), limit = _mm256_set1_pd(65535.5);
    const __m256d one_d = _mm256_set1_pd(1.0);
    ptrdiff_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m256i flags = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(smooth + i)));
        const __m256 interpolate = _mm256_castsi256_ps(_mm256_cmpgt_epi32(flags, _mm256_setzero_si256()));
        // Explicit multiplies and an add: no contraction into a fused multiply-add.
        const __m256 blend = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(top + i), vib),
                                           _mm256_mul_ps(_mm256_loadu_ps(bottom + i), vb));
        const __m256 q = _mm256_blendv_ps(_mm256_loadu_ps(nearest + i), blend, interpolate);
        const __m256 positive = _mm256_cmp_ps(q, zero, _CMP_GT_OQ);
        const __m256 reciprocal = _mm256_div_ps(one, q);
        __m128i halves[2];
        for (int h = 0; h < 2; h++) {
            const __m128 part = h == 0 ? _mm256_castps256_ps128(reciprocal) : _mm256_extractf128_ps(reciprocal, 1);
            const __m256d z = _mm256_mul_pd(_mm256_cvtps_pd(part), vscale);
            const __m256d inside = _mm256_and_pd(_mm256_cmp_pd(z, half, _CMP_GE_OQ), _mm256_cmp_pd(z, limit, _CMP_LT_OQ));
            const __m256d whole = _mm256_floor_pd(z);
            const __m256d up = _mm256_and_pd(_mm256_cmp_pd(_mm256_sub_pd(z, whole), half, _CMP_GE_OQ), one_d);
            const __m256d rounded = _mm256_and_pd(_mm256_add_pd(whole, up), inside);
            halves[h] = _mm256_cvttpd_epi32(rounded);
        }
        const __m256i units = _mm256_and_si256(_mm256_setr_m128i(halves[0], halves[1]), _mm256_castps_si256(positive));
        const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(units), _mm256_extracti128_si256(units, 1));
        _mm_storeu_si128((__m128i *)(void *)(out + i), packed);
    }
    return i;
}

/// Sixteen int32 lanes (two vectors, in order) >> 16, clamped to [0, 255], as bytes in order.
__attribute__((target("avx2"), always_inline))
static inline __m128i clamp_sixteen(__m256i lo, __m256i hi) {
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packs_epi32(_mm256_srai_epi32(lo, 16), _mm256_srai_epi32(hi, 16)),
                                                    0xD8);
    return _mm_packus_epi16(_mm256_castsi256_si128(packed), _mm256_extracti128_si256(packed, 1));
}

/// Eight int32 lanes >> 16, clamped to [0, 255], as the low eight bytes.
__attribute__((target("avx2"), always_inline))
static inline __m128i clamp_eight(__m256i v) {
    const __m256i shifted = _mm256_srai_epi32(v, 16);
    const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(shifted), _mm256_extracti128_si256(shifted, 1));
    return _mm_packus_epi16(words, words);
}

__attribute__((target("avx2")))
ptrdiff_t rgbd_ycbcr420_recode_rows_avx2(ptrdiff_t count, const uint8_t *y0, const uint8_t *y1, const uint8_t *cb,
                                         const uint8_t *cr, uint8_t *out_y0, uint8_t *out_y1, uint8_t *out_cb,
                                         uint8_t *out_cr, const int32_t *coefficients) {
    const __m256i ly = _mm256_set1_epi32(coefficients[0]), lcb = _mm256_set1_epi32(coefficients[1]);
    const __m256i lcr = _mm256_set1_epi32(coefficients[2]), loff = _mm256_set1_epi32(coefficients[3]);
    const __m256i cbb = _mm256_set1_epi32(coefficients[4]), cbr = _mm256_set1_epi32(coefficients[5]);
    const __m256i crb = _mm256_set1_epi32(coefficients[6]), crr = _mm256_set1_epi32(coefficients[7]);
    const __m256i coff = _mm256_set1_epi32(coefficients[8]);
    const __m256i first = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
    const __m256i second = _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7);
    ptrdiff_t x = 0;
    for (; x + 16 <= count; x += 16) {
        const __m256i u = chroma_eight(cb + x / 2), v = chroma_eight(cr + x / 2);
        const __m256i term = _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(u, lcb), _mm256_mullo_epi32(v, lcr)), loff);
        const __m256i term_lo = _mm256_permutevar8x32_epi32(term, first);
        const __m256i term_hi = _mm256_permutevar8x32_epi32(term, second);
        const uint8_t *rows[2] = {y0, y1};
        uint8_t *outs[2] = {out_y0, out_y1};
        for (int r = 0; r < 2; r++) {
            if (!rows[r] || !outs[r]) continue;
            const __m128i luma = _mm_loadu_si128((const __m128i *)(const void *)(rows[r] + x));
            const __m256i lo = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_cvtepu8_epi32(luma), ly), term_lo);
            const __m256i hi = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(luma, 8)), ly), term_hi);
            _mm_storeu_si128((__m128i *)(void *)(outs[r] + x), clamp_sixteen(lo, hi));
        }
        const __m256i new_cb = _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(u, cbb), _mm256_mullo_epi32(v, cbr)), coff);
        const __m256i new_cr = _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(u, crb), _mm256_mullo_epi32(v, crr)), coff);
        _mm_storel_epi64((__m128i *)(void *)(out_cb + x / 2), clamp_eight(new_cb));
        _mm_storel_epi64((__m128i *)(void *)(out_cr + x / 2), clamp_eight(new_cr));
    }
    return x;
}

#else

int rgbd_kernels_have_avx2(void) { return 0; }

ptrdiff_t rgbd_sample3_direct_avx2(ptrdiff_t count, const void *words, int y, int x0, const uint8_t *src,
                                   int width, int height, ptrdiff_t row_bytes, uint8_t *out) {
    (void)count; (void)words; (void)y; (void)x0; (void)src; (void)width; (void)height; (void)row_bytes; (void)out;
    return 0;
}

ptrdiff_t rgbd_sample3_prepared_avx2(ptrdiff_t count, const int32_t *offsets, const uint32_t *top,
                                     const uint32_t *bottom, const uint8_t *fast, const uint8_t *src,
                                     ptrdiff_t row_bytes, uint8_t *out) {
    (void)count; (void)offsets; (void)top; (void)bottom; (void)fast; (void)src; (void)row_bytes; (void)out;
    return 0;
}

ptrdiff_t rgbd_sample4_direct_avx2(ptrdiff_t count, const void *words, int y, int x0, const uint8_t *src,
                                   int width, int height, ptrdiff_t row_bytes, uint8_t *out) {
    (void)count; (void)words; (void)y; (void)x0; (void)src; (void)width; (void)height; (void)row_bytes; (void)out;
    return 0;
}

ptrdiff_t rgbd_sample1_direct_avx2(ptrdiff_t count, const void *words, int y, int x0, const uint8_t *src,
                                   int width, int height, ptrdiff_t row_bytes, uint8_t *out) {
    (void)count; (void)words; (void)y; (void)x0; (void)src; (void)width; (void)height; (void)row_bytes; (void)out;
    return 0;
}

ptrdiff_t rgbd_paeth_filter_avx2(const uint8_t *row, const uint8_t *above, ptrdiff_t bpp, uint8_t *out,
                                 ptrdiff_t start, ptrdiff_t count) {
    (void)row; (void)above; (void)bpp; (void)out; (void)count;
    return start;
}

ptrdiff_t rgbd_ycbcr420_rows_avx2(ptrdiff_t count, const uint8_t *y0, const uint8_t *y1, const uint8_t *cb,
                                  const uint8_t *cr, uint8_t *out0, uint8_t *out1, const int32_t *coefficients) {
    (void)count; (void)y0; (void)y1; (void)cb; (void)cr; (void)out0; (void)out1; (void)coefficients;
    return 0;
}

int rgbd_tsdf_block_avx2(const rgbd_tsdf_frame *frame, float origin_x, float origin_y, float origin_z, void *voxels) {
    (void)frame; (void)origin_x; (void)origin_y; (void)origin_z; (void)voxels;
    return 0;
}

ptrdiff_t rgbd_depth_units_avx2(ptrdiff_t count, const uint8_t *smooth, const float *top, const float *bottom,
                                const float *nearest, float b, float inverse_b, double scale, uint16_t *out) {
    (void)count; (void)smooth; (void)top; (void)bottom; (void)nearest; (void)b; (void)inverse_b; (void)scale; (void)out;
    return 0;
}

ptrdiff_t rgbd_ycbcr420_recode_rows_avx2(ptrdiff_t count, const uint8_t *y0, const uint8_t *y1, const uint8_t *cb,
                                         const uint8_t *cr, uint8_t *out_y0, uint8_t *out_y1, uint8_t *out_cb,
                                         uint8_t *out_cr, const int32_t *coefficients) {
    (void)count; (void)y0; (void)y1; (void)cb; (void)cr; (void)out_y0; (void)out_y1; (void)out_cb; (void)out_cr;
    (void)coefficients;
    return 0;
}

#endif
