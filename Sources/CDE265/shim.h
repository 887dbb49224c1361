#ifndef RGBD_CDE265_SHIM_H
#define RGBD_CDE265_SHIM_H
// libde265, the HEVC decoder libheif itself uses: rgbd feeds it the tiles of common HEIC
// files directly, one decoder per core (HEIFItems, HEVCImageDecoder).
#include <libde265/de265.h>
#endif
