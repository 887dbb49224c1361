#ifndef RGBD_CDEFLATE_SHIM_H
#define RGBD_CDEFLATE_SHIM_H
// Eric Biggers' libdeflate: libdeflate_alloc_compressor, libdeflate_deflate_compress
// (raw deflate, one whole buffer per call). `--small-png` codes strips with it.
#include <stddef.h>
#include <libdeflate.h>
#endif
