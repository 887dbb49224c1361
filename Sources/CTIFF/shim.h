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
// ---- reading from memory -------------------------------------------------------------
// TIFFClientOpen over a byte buffer (which must outlive the TIFF), so that a depth TIFF
// is read from the bytes the bounded reader read, never by opening its path again.
#include <string.h>

typedef struct {
    const unsigned char *data;
    toff_t size;
    toff_t offset;
} rgbd_tiff_memory;

static inline tmsize_t rgbd_tiff_memory_read(thandle_t handle, void *buffer, tmsize_t count) {
    rgbd_tiff_memory *m = (rgbd_tiff_memory *)handle;
    if (count <= 0 || m->offset >= m->size) return 0;
    toff_t left = m->size - m->offset;
    toff_t n = (toff_t)count < left ? (toff_t)count : left;
    memcpy(buffer, m->data + m->offset, (size_t)n);
    m->offset += n;
    return (tmsize_t)n;
}
static inline tmsize_t rgbd_tiff_memory_write(thandle_t handle, void *buffer, tmsize_t count) {
    (void)handle; (void)buffer; (void)count;
    return -1;
}
static inline toff_t rgbd_tiff_memory_seek(thandle_t handle, toff_t offset, int whence) {
    rgbd_tiff_memory *m = (rgbd_tiff_memory *)handle;
    toff_t base = whence == SEEK_CUR ? m->offset : whence == SEEK_END ? m->size : 0;
    if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) return (toff_t)-1;
    if (offset > (toff_t)-1 - base) return (toff_t)-1;
    m->offset = base + offset;  // beyond the end is allowed; reads there return nothing
    return m->offset;
}
static inline int rgbd_tiff_memory_close(thandle_t handle) {
    (void)handle;  // the state is the caller's
    return 0;
}
static inline toff_t rgbd_tiff_memory_size(thandle_t handle) { return ((rgbd_tiff_memory *)handle)->size; }
static inline int rgbd_tiff_memory_map(thandle_t handle, void **base, toff_t *size) {
    (void)handle; (void)base; (void)size;
    return 0;
}
static inline void rgbd_tiff_memory_unmap(thandle_t handle, void *base, toff_t size) {
    (void)handle; (void)base; (void)size;
}

/// Opens `size` bytes at `data` for reading, through `m` (the caller's, like the bytes:
/// both must outlive the TIFF, until TIFFClose); `name` is for libtiff's messages. With
/// libtiff 4.5 or later, no single allocation of libtiff's may exceed `max_allocation`
/// bytes. NULL if the bytes are not a TIFF.
static inline TIFF *rgbd_tiff_open_memory(rgbd_tiff_memory *m, const unsigned char *data, size_t size,
                                          const char *name, long long max_allocation) {
    m->data = data;
    m->size = (toff_t)size;
    m->offset = 0;
    TIFF *tif;
#if defined(TIFFLIB_VERSION) && TIFFLIB_VERSION >= 20221213
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (options != NULL) TIFFOpenOptionsSetMaxSingleMemAlloc(options, (tmsize_t)max_allocation);
    // "m": no memory mapping (the callbacks' map refuses anyway).
    tif = TIFFClientOpenExt(name, "rm", (thandle_t)m, rgbd_tiff_memory_read, rgbd_tiff_memory_write,
                            rgbd_tiff_memory_seek, rgbd_tiff_memory_close, rgbd_tiff_memory_size,
                            rgbd_tiff_memory_map, rgbd_tiff_memory_unmap, options);
    if (options != NULL) TIFFOpenOptionsFree(options);
#else
    (void)max_allocation;
    tif = TIFFClientOpen(name, "rm", (thandle_t)m, rgbd_tiff_memory_read, rgbd_tiff_memory_write,
                         rgbd_tiff_memory_seek, rgbd_tiff_memory_close, rgbd_tiff_memory_size,
                         rgbd_tiff_memory_map, rgbd_tiff_memory_unmap);
#endif
    return tif;
}
#endif
