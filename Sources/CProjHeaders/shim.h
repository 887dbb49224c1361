#ifndef RGBD_CPROJ_HEADERS_SHIM_H
#define RGBD_CPROJ_HEADERS_SHIM_H
// Empty on purpose: this system-library target only carries PROJ's include path (from
// pkg-config, on macOS) to the CProj target, whose header includes <proj.h>.
#endif
