#ifndef RGBD_CTIFF_SHIM_H
#define RGBD_CTIFF_SHIM_H
#include <stdint.h>
#include <tiffio.h>

// TIFFSetField and TIFFGetField are variadic: Swift cannot call them.
// These fixed-signature wrappers cover the tags rgbd writes and reads.
static inline int rgbd_tiff_set_u32(TIFF *tif, uint32_t tag, uint32_t value) {
    return TIFFSetField(tif, tag, value);
}
static inline int rgbd_tiff_set_u16(TIFF *tif, uint32_t tag, uint16_t value) {
    // uint16 tags are passed as int through the varargs promotion.
    return TIFFSetField(tif, tag, (int)value);
}
static inline int rgbd_tiff_set_string(TIFF *tif, uint32_t tag, const char *value) {
    return TIFFSetField(tif, tag, value);
}
static inline int rgbd_tiff_get_u32(TIFF *tif, uint32_t tag, uint32_t *value) {
    return TIFFGetField(tif, tag, value);
}
static inline int rgbd_tiff_get_u16(TIFF *tif, uint32_t tag, uint16_t *value) {
    return TIFFGetFieldDefaulted(tif, tag, value);
}
// libtiff prints errors and warnings to stderr by default; rgbd reports its own.
static inline void rgbd_tiff_silence(void) {
    TIFFSetErrorHandler(NULL);
    TIFFSetWarningHandler(NULL);
}
#endif
