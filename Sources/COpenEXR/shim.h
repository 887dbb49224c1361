#ifndef RGBD_COPENEXR_SHIM_H
#define RGBD_COPENEXR_SHIM_H
// OpenEXR 3.1+'s C library, OpenEXRCore (not the C++ one): the EXR depth maps of Record3D's
// exports (EXRDepth). Swift cannot import the initializer macro; the function below gives
// its value, whatever the library version's initializer struct holds.
#include <stddef.h>
#include <stdint.h>
#include <OpenEXR/openexr.h>

/// EXR_DEFAULT_CONTEXT_INITIALIZER.
static inline exr_context_initializer_t rgbd_exr_default_initializer(void) {
    exr_context_initializer_t initializer = EXR_DEFAULT_CONTEXT_INITIALIZER;
    return initializer;
}
#endif
