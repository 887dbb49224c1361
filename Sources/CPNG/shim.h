#ifndef RGBD_CPNG_SHIM_H
#define RGBD_CPNG_SHIM_H
// libpng's simplified API (png_image_*) needs no setjmp, so Swift can call it.
// png.h refers to FILE; include <stdio.h> first.
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <png.h>
#include <zlib.h>

// PNG_IMAGE_ROW_STRIDE / PNG_IMAGE_SIZE and the format constants are macros whose
// expressions Swift cannot import; these spell out what rgbd uses.
static inline unsigned int rgbd_png_format_rgb(void) { return PNG_FORMAT_RGB; }
static inline unsigned int rgbd_png_format_linear_y(void) { return PNG_FORMAT_LINEAR_Y; }
static inline unsigned int rgbd_png_format_gray(void) { return PNG_FORMAT_GRAY; }
static inline unsigned int rgbd_png_image_version(void) { return PNG_IMAGE_VERSION; }

// ---- zlib ----------------------------------------------------------------------------
// inflateInit2 is a macro (it passes ZLIB_VERSION and sizeof(z_stream)), and
// adler32_combine may be renamed by a macro (adler32_combine64); Swift imports neither.

/// Starts a raw inflate stream (windowBits -15). The stream must not move while in use.
static inline int rgbd_inflate_init_raw(z_stream *stream) {
    stream->zalloc = Z_NULL;
    stream->zfree = Z_NULL;
    stream->opaque = Z_NULL;
    stream->next_in = Z_NULL;
    stream->avail_in = 0;
    return inflateInit2(stream, -15);
}

/// The Adler-32 of A followed by B, from the Adler-32s of A and B and B's length.
static inline unsigned long rgbd_adler32_combine(unsigned long adler_a, unsigned long adler_b, long long length_b) {
    return adler32_combine(adler_a, adler_b, (z_off_t)length_b);
}

// ---- PNG container -------------------------------------------------------------------
// PNGCodec filters and deflates the image data itself (in strips, on several threads)
// and has libpng write only the file around it: signature, IHDR, IDAT chunks, IEND,
// with their CRCs. libpng reports errors by calling an error function that must not
// return, i.e. by longjmp back to a setjmp; Swift can neither call setjmp nor have a
// longjmp cross its frames, so all of libpng's low-level write API is used from here.

/// Where rgbd_png_write_container writes: a caller buffer, and room for an error message.
typedef struct {
    unsigned char *data;
    size_t capacity;
    size_t size;
    char *message;
    size_t message_capacity;
} rgbd_png_sink;

static inline void rgbd_png_sink_write(png_structp png, png_bytep data, size_t length) {
    rgbd_png_sink *sink = (rgbd_png_sink *)png_get_io_ptr(png);
    if (length > sink->capacity - sink->size) png_error(png, "output buffer too small");
    memcpy(sink->data + sink->size, data, length);
    sink->size += length;
}

static inline void rgbd_png_sink_flush(png_structp png) { (void)png; }

// Copies the message for the caller and jumps back to rgbd_png_write_container.
static inline void rgbd_png_sink_error(png_structp png, png_const_charp message) {
    rgbd_png_sink *sink = (rgbd_png_sink *)png_get_error_ptr(png);
    if (sink->message_capacity > 0) snprintf(sink->message, sink->message_capacity, "%s", message);
    png_longjmp(png, 1);
}

static inline void rgbd_png_sink_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

/// Writes a PNG file into `output` (`capacity` bytes): signature, IHDR (8-bit RGB if
/// `rgb`, else gray of `bit_depth` bits, not interlaced), one IDAT chunk per segment
/// (`segments[i]`, `segment_sizes[i]` bytes: together the zlib stream of the filtered
/// rows), then IEND. Sets `*written` to the file's length and returns 0, or returns
/// non-zero with a message in `message` (`message_capacity` bytes, NUL-terminated).
static inline int rgbd_png_write_container(uint32_t width, uint32_t height, int bit_depth, int rgb,
                                           const unsigned char *const *segments,
                                           const size_t *segment_sizes, size_t segment_count,
                                           unsigned char *output, size_t capacity, size_t *written,
                                           char *message, size_t message_capacity) {
    rgbd_png_sink sink = {output, capacity, 0, message, message_capacity};
    if (message_capacity > 0) message[0] = 0;
    *written = 0;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, rgbd_png_sink_error,
                                              rgbd_png_sink_warning);
    if (png == NULL) {
        if (message_capacity > 0) snprintf(message, message_capacity, "%s", "cannot create libpng writer");
        return 1;
    }
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        if (message_capacity > 0) snprintf(message, message_capacity, "%s", "cannot create libpng info");
        return 1;
    }
    // `png` and `info` are not modified after setjmp, so they are valid after longjmp.
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return 2;
    }
    png_set_write_fn(png, &sink, rgbd_png_sink_write, rgbd_png_sink_flush);
    // The default limit (1,000,000 pixels a side) is for reading untrusted files.
    png_set_user_limits(png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
    png_set_IHDR(png, info, width, height, rgb ? 8 : bit_depth, rgb ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    static const png_byte idat[5] = {'I', 'D', 'A', 'T', 0};
    static const png_byte iend[5] = {'I', 'E', 'N', 'D', 0};
    for (size_t i = 0; i < segment_count; i++) png_write_chunk(png, idat, segments[i], segment_sizes[i]);
    png_write_chunk(png, iend, NULL, 0);
    png_destroy_write_struct(&png, &info);
    *written = sink.size;
    return 0;
}
#endif
