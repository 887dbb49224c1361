#ifndef RGBD_CHEIF_SHIM_H
#define RGBD_CHEIF_SHIM_H
// libheif 1.15+ C API (HEIC/HEIF decoding; its HEVC decoder is libde265).
#include <stddef.h>
#include <stdint.h>
#include <libheif/heif.h>
#endif
