#ifndef RGBD_CTURBOJPEG_SHIM_H
#define RGBD_CTURBOJPEG_SHIM_H
// TurboJPEG 2.x API (tjInitDecompress, tjDecompress2, tjCompress2).
// turbojpeg.h uses size_t without including <stddef.h> on some versions.
#include <stddef.h>
#include <turbojpeg.h>
#endif
