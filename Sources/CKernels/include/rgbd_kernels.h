/*
 * rgbd_kernels.h — the few inner loops of RGBDKit written for AVX2, chosen at run time.
 *
 * Swift cannot compile one function for a wider instruction set than the rest of the
 * program, and a package that others depend on may not pass -mavx2 (an unsafe flag).
 * C can: each function here carries __attribute__((target("avx2"))) and is called only
 * when rgbd_kernels_have_avx2() says the CPU and the OS run AVX2 code. Everywhere else
 * (older x86-64, arm64) the functions do nothing and the Swift loops, which compute the
 * same bytes, do the work. Each function's result equals its Swift counterpart's bit
 * for bit (tests compare them); each returns how far it got, and Swift does the rest.
 */
#ifndef RGBD_KERNELS_H
#define RGBD_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/// 1 when this CPU and operating system run AVX2 code, else 0 (also on non-x86 CPUs).
int rgbd_kernels_have_avx2(void);

/// Bilinear sampling of 4-byte pixels (BGRA) straight from a rectification map's words,
/// as Swift's `FrameRemap.sampleColorDirect4`: output pixels x0 + i, i in [0, count),
/// of row `y`, where word i holds (dx, dy) in 1/256 pixel (two int16), the source
/// position being (256 (x0 + i) + dx, 256 y + dy). Works eight pixels at a time and
/// stops at the first group of eight that is not whole or whose neighborhoods are not
/// all inside the source (0 <= x < width - 1, 0 <= y < height - 1); returns the index
/// of that group (count when it did them all; 0 without AVX2). Requires width and
/// height < 32000 and 0 < row_bytes <= 32767.
ptrdiff_t rgbd_sample4_direct_avx2(ptrdiff_t count, const void *words, int y, int x0, const uint8_t *src,
                                   int width, int height, ptrdiff_t row_bytes, uint8_t *out);

/// rgbd_sample4_direct_avx2 for 3-byte pixels (RGB), as `FrameRemap.sampleColorDirect3`:
/// inside means 0 <= x < width - 2 (an 8-byte load at x reads two pixels and two bytes
/// more). Writes exactly 3 bytes per pixel done.
ptrdiff_t rgbd_sample3_direct_avx2(ptrdiff_t count, const void *words, int y, int x0, const uint8_t *src,
                                   int width, int height, ptrdiff_t row_bytes, uint8_t *out);

/// RGB sampling from prepared neighborhoods, as Swift's `ColorRemap.sampleSpan3`: pixel
/// i's neighborhood starts at byte offsets[i] of `src`, its weight pairs are top[i]
/// (w00 | w10 << 16) and bottom[i] (w01 | w11 << 16), and fast[i / 4] is nonzero when
/// the group of four pixels from 4 (i / 4) may be read without checks (x < width - 2,
/// y < height - 1). Works eight pixels at a time and stops at the first group of eight
/// that is not whole or not all fast; returns its index (0 without AVX2). Writes
/// exactly 3 bytes per pixel done.
ptrdiff_t rgbd_sample3_prepared_avx2(ptrdiff_t count, const int32_t *offsets, const uint32_t *top,
                                     const uint32_t *bottom, const uint8_t *fast, const uint8_t *src,
                                     ptrdiff_t row_bytes, uint8_t *out);

/// Bilinear sampling of one 8-bit channel (luminance) from a rectification map's words,
/// as Swift's `FrameRemap.sample1Direct`; words and arguments as for
/// rgbd_sample4_direct_avx2. Works sixteen pixels at a time while their neighborhoods
/// are inside (0 <= x < width - 1, 0 <= y < height - 1) and lie in one window 16 bytes
/// wide and two or three rows high (read with three loads, picked by byte shuffles);
/// returns the index of the first group of sixteen that is not so (count when none).
ptrdiff_t rgbd_sample1_direct_avx2(ptrdiff_t count, const void *words, int y, int x0, const uint8_t *src,
                                   int width, int height, ptrdiff_t row_bytes, uint8_t *out);

/// PNG's Paeth filter (encoding) of bytes [start, count) of `row`, 32 at a time while 32
/// remain: out[i] = row[i] - paeth(row[i - bpp], above[i], above[i - bpp]). Requires
/// start >= bpp. Returns where it stopped (start without AVX2).
ptrdiff_t rgbd_paeth_filter_avx2(const uint8_t *row, const uint8_t *above, ptrdiff_t bpp, uint8_t *out,
                                 ptrdiff_t start, ptrdiff_t count);

/// Y′CbCr 4:2:0 to packed RGB for two rows that share a chroma row, as Swift's
/// `YCbCrConversion.convertRows`: pixels [0, count) of luma rows `y0` and `y1` (`y1` and
/// `out1` NULL for a single last row) with chroma `cb`, `cr` at half width, each chroma
/// sample repeated over its two pixels. coefficients (1/65536): luma scale, luma offset,
/// red from Cr, green from Cb, green from Cr, blue from Cb; a channel is
/// clamp((luma scale * Y + luma offset + contributions of Cb - 128 and Cr - 128) >> 16).
/// Works sixteen pixels at a time; returns how many pixels it did (0 without AVX2).
ptrdiff_t rgbd_ycbcr420_rows_avx2(ptrdiff_t count, const uint8_t *y0, const uint8_t *y1, const uint8_t *cb,
                                  const uint8_t *cr, uint8_t *out0, uint8_t *out1, const int32_t *coefficients);

/// One depth frame as the TSDF integration of a block sees it (Swift's `TSDFVolume`).
typedef struct rgbd_tsdf_frame {
    float fx, fy, cx, cy;          /* depth intrinsics, pixel centres at integers */
    int32_t width, height;         /* depth map size */
    float trunc, trunc_inv;        /* truncation distance (meters) and its reciprocal */
    float step_x[3];               /* camera-frame step of one voxel along world x */
    float step_y[3];               /* ... along world y */
    float step_z[3];               /* ... along world z */
    const float *depth;            /* width*height meters (NaN or <= 0: none) */
    const float *weights;          /* width*height observation weights (<= 0: unused) */
    const uint8_t *colors;         /* NULL, or width*height RGB plus one readable byte after */
    const float *bands;            /* NULL (every pixel truncated at trunc, stored / trunc), or width*height
                                      truncations in meters (each >= trunc): stored / the volume's range */
    float range_inv;               /* with bands: 1 / the volume's range (the largest band) */
} rgbd_tsdf_frame;

/// Integrates `frame` into the 512 voxels of one 8x8x8 block (8 bytes each: int16 tsdf,
/// uint16 weight, uint8 red, green, blue, color weight; x fastest, then y, then z), as
/// Swift's `TSDFVolume.integrateBlock` does, bit for bit (with or without per-pixel
/// bands; colors only within ±trunc either way): voxel (x, y, z) is at
/// ((origin + step_z z) + step_y y) + step_x x in the camera frame. Returns 1 when it
/// did the block, 0 without AVX2 (Swift then does it).
int rgbd_tsdf_block_avx2(const rgbd_tsdf_frame *frame, float origin_x, float origin_y, float origin_z, void *voxels);

/// One output row of the export's depth resampling, as Swift's `ExportFrameImages.depth`:
/// for pixels i in [0, count), q = smooth[i] ? top[i] * inverse_b + bottom[i] * b (each
/// product rounded to float, then the sum) : nearest[i]; then z = (double)(1 / q) *
/// scale, and out[i] = round(z) (half away from zero) when q > 0 and 0.5 <= z < 65535.5,
/// else 0. IEEE single and double arithmetic, no fused multiply-add: the same values as
/// the Swift loop. Works eight pixels at a time; returns how many it did (0 without AVX2).
ptrdiff_t rgbd_depth_units_avx2(ptrdiff_t count, const uint8_t *smooth, const float *top, const float *bottom,
                                const float *nearest, float b, float inverse_b, double scale, uint16_t *out);

/// Y′CbCr 4:2:0 of one matrix and range to JPEG's (BT.601, full range), as Swift's
/// `JPEGColorConversion.convertRows`: pixels [0, count) of luma rows `y0` and `y1` (`y1`
/// and `out_y1` NULL for a single last row) and their chroma row `cb`, `cr` (half width)
/// into `out_y0`, `out_y1`, `out_cb`, `out_cr` (which may be the inputs).
/// coefficients (1/65536): luma from Y′, from Cb - 128, from Cr - 128, luma offset; Cb
/// from Cb - 128, from Cr - 128; Cr from Cb - 128, from Cr - 128; chroma offset. Each
/// output is clamp((sum of products + offset) >> 16) to [0, 255], luma with its 2×2
/// block's chroma. Works sixteen pixels at a time; returns how many it did (0 without AVX2).
ptrdiff_t rgbd_ycbcr420_recode_rows_avx2(ptrdiff_t count, const uint8_t *y0, const uint8_t *y1, const uint8_t *cb,
                                         const uint8_t *cr, uint8_t *out_y0, uint8_t *out_y1, uint8_t *out_cb,
                                         uint8_t *out_cr, const int32_t *coefficients);

#endif
