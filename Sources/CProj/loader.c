// Loads PROJ's library at first use and resolves rgbd_proj (CProj.h says why).
#include "CProj.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RGBD_TEXT_(x) #x
#define RGBD_TEXT(x) RGBD_TEXT_(x)

// The library's version in its file name: PROJ 9 installs libproj.so.25, PROJ 8
// libproj.so.22; other versions are tried by the unversioned name only.
#if PROJ_VERSION_MAJOR == 9
#define RGBD_PROJ_SONAME "25"
#elif PROJ_VERSION_MAJOR == 8
#define RGBD_PROJ_SONAME "22"
#endif

static const char *const names[] = {
#ifdef __APPLE__
#ifdef RGBD_PROJ_SONAME
    "libproj." RGBD_PROJ_SONAME ".dylib",
#endif
    "libproj.dylib",
#else
#ifdef RGBD_PROJ_SONAME
    "libproj.so." RGBD_PROJ_SONAME,
#endif
    "libproj.so",
#endif
};
enum { name_count = sizeof names / sizeof names[0] };

static const char *const default_directories[] = {
    "",
#ifdef __APPLE__
    "/opt/homebrew/opt/proj/lib", "/opt/homebrew/lib", "/usr/local/opt/proj/lib", "/usr/local/lib", "/opt/local/lib",
#endif
};
enum { default_directory_count = sizeof default_directories / sizeof default_directories[0] };

static rgbd_proj table;
static const rgbd_proj *loaded;
static char failure[768];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/// Opens the first library of the headers' major version; NULL (with `failure` set) when none.
static void *open_library(const char *const *directories, int directory_count) {
    char first_error[512] = "", wrong_version[256] = "";
    for (int n = 0; n < name_count; n++) {
        for (int d = 0; d < directory_count; d++) {
            char path[1024];
            snprintf(path, sizeof path, "%s%s%s", directories[d], directories[d][0] ? "/" : "", names[n]);
            void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (!handle) {
                const char *error = dlerror();
                if (!first_error[0]) snprintf(first_error, sizeof first_error, "%s", error ? error : path);
                continue;
            }
            PJ_INFO (*info)(void) = NULL;
            void *symbol = dlsym(handle, "proj_info");
            memcpy(&info, &symbol, sizeof info);
            int major = info ? info().major : -1;
            if (major == PROJ_VERSION_MAJOR) return handle;
            if (!wrong_version[0])
                snprintf(wrong_version, sizeof wrong_version, "%s is PROJ %d, rgbd was built for %d", path, major,
                         PROJ_VERSION_MAJOR);
            dlclose(handle);
        }
    }
    snprintf(failure, sizeof failure, "%s", wrong_version[0] ? wrong_version : first_error);
    return NULL;
}

static void load(void) {
    const char *override = getenv("RGBD_PROJ_DIR");
    const char *const *directories = default_directories;
    int directory_count = default_directory_count;
    if (override && override[0]) {
        directories = &override;
        directory_count = 1;
    }
    void *proj = open_library(directories, directory_count);
    if (!proj) return;
    int complete = 1;
#define RGBD_RESOLVE(function)                                                            \
    do {                                                                                  \
        void *symbol = dlsym(proj, #function);                                            \
        if (!symbol && complete) snprintf(failure, sizeof failure, "libproj has no function " #function); \
        if (!symbol) complete = 0;                                                        \
        memcpy(&table.function, &symbol, sizeof symbol);                                  \
    } while (0)
    RGBD_RESOLVE(proj_info);
    RGBD_RESOLVE(proj_context_create);
    RGBD_RESOLVE(proj_context_destroy);
    RGBD_RESOLVE(proj_context_set_enable_network);
    RGBD_RESOLVE(proj_context_errno);
    RGBD_RESOLVE(proj_context_errno_string);
    RGBD_RESOLVE(proj_log_level);
    RGBD_RESOLVE(proj_create);
    RGBD_RESOLVE(proj_create_crs_to_crs);
    RGBD_RESOLVE(proj_normalize_for_visualization);
    RGBD_RESOLVE(proj_destroy);
    RGBD_RESOLVE(proj_get_type);
    RGBD_RESOLVE(proj_as_wkt);
    RGBD_RESOLVE(proj_trans);
#undef RGBD_RESOLVE
    if (complete) loaded = &table;
}

const rgbd_proj *rgbd_proj_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *rgbd_proj_failure(void) { return failure; }
