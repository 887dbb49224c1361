#ifndef RGBD_CPNG_SHIM_H
#define RGBD_CPNG_SHIM_H
// libpng's simplified API (png_image_*) needs no setjmp, so Swift can call it.
// png.h refers to FILE; include <stdio.h> first.
#include <stdio.h>
#include <png.h>

// PNG_IMAGE_ROW_STRIDE / PNG_IMAGE_SIZE and the format constants are macros whose
// expressions Swift cannot import; these spell out what rgbd uses.
static inline unsigned int rgbd_png_format_rgb(void) { return PNG_FORMAT_RGB; }
static inline unsigned int rgbd_png_format_gray(void) { return PNG_FORMAT_GRAY; }
static inline unsigned int rgbd_png_format_linear_y(void) { return PNG_FORMAT_LINEAR_Y; }
static inline unsigned int rgbd_png_image_version(void) { return PNG_IMAGE_VERSION; }
static inline int rgbd_png_image_failed(const png_image *image) { return PNG_IMAGE_FAILED(*image); }
#endif
