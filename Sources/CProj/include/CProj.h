#ifndef RGBD_CPROJ_H
#define RGBD_CPROJ_H
// PROJ's C API (coordinate reference systems, transformations, WKT, the geoid grid), for
// `rgbd cloud --crs` (Sources/RGBDKit/Geo/Projection.swift), loaded at first use rather
// than linked: libproj brings about 45 more shared libraries (libcurl and its TLS, LDAP
// and Kerberos stack, SQLite, libtiff) that every start of rgbd would load and relocate,
// while only `--crs` needs it. rgbd_proj_load() `dlopen`s it at the first `--crs` and
// resolves the functions rgbd calls into a table, `rgbd_proj`.
//
// Types and constants come from the system's <proj.h>; the loader opens the library of the
// major version those headers describe (libproj.so.25 for PROJ 9; libproj.25.dylib), then
// the unversioned name, and refuses a library whose proj_info() gives another major version.
#include <proj.h>

/// PROJ's functions that rgbd calls, resolved from the loaded library. Each member has the
/// type of the function it is named after, as <proj.h> declares it.
typedef struct rgbd_proj {
    __typeof__(proj_info) *_Nonnull proj_info;
    __typeof__(proj_context_create) *_Nonnull proj_context_create;
    __typeof__(proj_context_destroy) *_Nonnull proj_context_destroy;
    __typeof__(proj_context_set_enable_network) *_Nonnull proj_context_set_enable_network;
    __typeof__(proj_context_errno) *_Nonnull proj_context_errno;
    __typeof__(proj_context_errno_string) *_Nonnull proj_context_errno_string;
    __typeof__(proj_log_level) *_Nonnull proj_log_level;
    __typeof__(proj_create) *_Nonnull proj_create;
    __typeof__(proj_create_crs_to_crs) *_Nonnull proj_create_crs_to_crs;
    __typeof__(proj_normalize_for_visualization) *_Nonnull proj_normalize_for_visualization;
    __typeof__(proj_destroy) *_Nonnull proj_destroy;
    __typeof__(proj_get_type) *_Nonnull proj_get_type;
    __typeof__(proj_as_wkt) *_Nonnull proj_as_wkt;
    __typeof__(proj_trans) *_Nonnull proj_trans;
} rgbd_proj;

/// Loads PROJ's library and resolves the table, once per process (thread-safe). NULL when
/// it cannot be loaded: then rgbd_proj_failure() says why. Where: the directory named by
/// the environment variable RGBD_PROJ_DIR when it is set, else the dynamic loader's search
/// path (on macOS then Homebrew's and MacPorts' directories).
const rgbd_proj *_Nullable rgbd_proj_load(void);

/// Why rgbd_proj_load() failed, in words; empty before a failure.
const char *_Nonnull rgbd_proj_failure(void);
#endif
