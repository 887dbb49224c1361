#ifndef RGBD_CISAL_SHIM_H
#define RGBD_CISAL_SHIM_H
// Intel ISA-L's deflate (igzip): isal_deflate_init, isal_deflate, isal_adler32.
#include <stdint.h>
#include <isa-l/igzip_lib.h>

// The level buffer sizes are macros built from other macros; Swift imports neither.

/// Bytes of the level buffer `isal_deflate` needs at `level` (1 to 3; 0 needs none).
static inline uint32_t rgbd_isal_level_buffer_size(int level) {
    switch (level) {
    case 1: return ISAL_DEF_LVL1_DEFAULT;
    case 2: return ISAL_DEF_LVL2_DEFAULT;
    case 3: return ISAL_DEF_LVL3_DEFAULT;
    default: return 0;
    }
}

/// ISA-L's status codes that rgbd checks.
static inline int rgbd_isal_comp_ok(void) { return COMP_OK; }
static inline uint16_t rgbd_isal_sync_flush(void) { return SYNC_FLUSH; }
static inline uint16_t rgbd_isal_no_flush(void) { return NO_FLUSH; }
static inline uint16_t rgbd_isal_raw_deflate(void) { return IGZIP_DEFLATE; }
#endif
