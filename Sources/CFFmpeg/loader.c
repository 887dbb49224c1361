// Loads FFmpeg's libraries at first use and resolves rgbd_ffmpeg (CFFmpeg.h says why).
#include "CFFmpeg.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RGBD_TEXT_(x) #x
#define RGBD_TEXT(x) RGBD_TEXT_(x)

/// One of FFmpeg's libraries: its base name, the major version of the headers rgbd was
/// built with, and the function giving the loaded library's version.
typedef struct {
    const char *name;
    unsigned major;
    const char *version_function;
} library;

// In the order they depend on one another (each loads the ones before it anyway).
static const library libraries[] = {
    {"avutil", LIBAVUTIL_VERSION_MAJOR, "avutil_version"},
    {"swscale", LIBSWSCALE_VERSION_MAJOR, "swscale_version"},
    {"avcodec", LIBAVCODEC_VERSION_MAJOR, "avcodec_version"},
    {"avformat", LIBAVFORMAT_VERSION_MAJOR, "avformat_version"},
};
enum { library_count = sizeof libraries / sizeof libraries[0] };

// Directories tried, in order, when RGBD_FFMPEG_DIR is not set; "" is the dynamic loader's
// own search (LD_LIBRARY_PATH, the cache, /usr/lib…; on macOS DYLD_LIBRARY_PATH and
// /usr/local/lib, but not Homebrew's /opt/homebrew nor MacPorts' /opt/local).
static const char *const default_directories[] = {
    "",
#ifdef __APPLE__
    "/opt/homebrew/opt/ffmpeg/lib", "/opt/homebrew/lib", "/usr/local/opt/ffmpeg/lib", "/usr/local/lib",
    "/opt/local/lib",
#endif
};
enum { default_directory_count = sizeof default_directories / sizeof default_directories[0] };

static rgbd_ffmpeg table;
static const rgbd_ffmpeg *loaded;
static char failure[768];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void fail(const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(failure, sizeof failure, format, arguments);
    va_end(arguments);
}

/// `directory/libNAME.so.MAJOR` (versioned) or `directory/libNAME.so`.
static void file_name(char *out, size_t size, const char *directory, const char *name, unsigned major, int versioned) {
    const char *slash = directory[0] ? "/" : "";
#ifdef __APPLE__
    if (versioned) snprintf(out, size, "%s%slib%s.%u.dylib", directory, slash, name, major);
    else snprintf(out, size, "%s%slib%s.dylib", directory, slash, name);
#else
    if (versioned) snprintf(out, size, "%s%slib%s.so.%u", directory, slash, name, major);
    else snprintf(out, size, "%s%slib%s.so", directory, slash, name);
#endif
}

/// Opens `lib` from the first directory that has it with the headers' major version; NULL
/// (with `failure` set) when none does.
static void *open_library(const library *lib, const char *const *directories, int directory_count) {
    char first_error[512] = "";
    char wrong_version[256] = "";
    for (int versioned = 1; versioned >= 0; versioned--) {
        for (int d = 0; d < directory_count; d++) {
            char path[1024];
            file_name(path, sizeof path, directories[d], lib->name, lib->major, versioned);
            void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (!handle) {
                const char *error = dlerror();
                if (!first_error[0]) snprintf(first_error, sizeof first_error, "%s", error ? error : path);
                continue;
            }
            unsigned (*version)(void) = NULL;
            void *symbol = dlsym(handle, lib->version_function);
            memcpy(&version, &symbol, sizeof version);
            unsigned found = version ? version() >> 16 : 0;
            if (found == lib->major) return handle;
            // An unversioned name can be another major version, whose structs differ.
            if (!wrong_version[0] && !version)
                snprintf(wrong_version, sizeof wrong_version, "%s has no %s: not lib%s", path, lib->version_function,
                         lib->name);
            else if (!wrong_version[0])
                snprintf(wrong_version, sizeof wrong_version, "%s is version %u, rgbd was built for %u", path, found,
                         lib->major);
            dlclose(handle);
        }
    }
    fail("%s", wrong_version[0] ? wrong_version : first_error);
    return NULL;
}

static void load(void) {
    const char *override = getenv("RGBD_FFMPEG_DIR");
    const char *const *directories = default_directories;
    int directory_count = default_directory_count;
    if (override && override[0]) {
        directories = &override;
        directory_count = 1;
    }
    void *handles[library_count];
    for (int i = 0; i < library_count; i++) {
        handles[i] = open_library(&libraries[i], directories, directory_count);
        if (!handles[i]) return;  // (the libraries opened stay loaded: harmless, and rare)
    }
    void *avutil = handles[0], *swscale = handles[1], *avcodec = handles[2], *avformat = handles[3];
    int complete = 1;
#define RGBD_RESOLVE(handle, function)                                                \
    do {                                                                              \
        void *symbol = dlsym(handle, #function);                                      \
        if (!symbol && complete) fail("lib" #handle " has no function " #function);   \
        if (!symbol) complete = 0;                                                    \
        memcpy(&table.function, &symbol, sizeof symbol);                              \
    } while (0)
    RGBD_RESOLVE(avutil, av_frame_alloc);
    RGBD_RESOLVE(avutil, av_frame_free);
    RGBD_RESOLVE(avutil, av_frame_unref);
    RGBD_RESOLVE(avutil, av_dict_set);
    RGBD_RESOLVE(avutil, av_dict_free);
    RGBD_RESOLVE(avutil, av_strerror);
    RGBD_RESOLVE(avutil, av_log_set_level);
    RGBD_RESOLVE(avutil, av_display_rotation_get);
    RGBD_RESOLVE(avutil, av_pix_fmt_desc_get);
    RGBD_RESOLVE(avcodec, avcodec_get_name);
    RGBD_RESOLVE(avcodec, avcodec_find_decoder);
    RGBD_RESOLVE(avcodec, avcodec_alloc_context3);
    RGBD_RESOLVE(avcodec, avcodec_free_context);
    RGBD_RESOLVE(avcodec, avcodec_parameters_to_context);
    RGBD_RESOLVE(avcodec, avcodec_open2);
    RGBD_RESOLVE(avcodec, avcodec_send_packet);
    RGBD_RESOLVE(avcodec, avcodec_receive_frame);
    RGBD_RESOLVE(avcodec, avcodec_flush_buffers);
    RGBD_RESOLVE(avcodec, av_packet_alloc);
    RGBD_RESOLVE(avcodec, av_packet_free);
    RGBD_RESOLVE(avcodec, av_packet_unref);
    RGBD_RESOLVE(avcodec, av_new_packet);
    RGBD_RESOLVE(avformat, avformat_open_input);
    RGBD_RESOLVE(avformat, avformat_find_stream_info);
    RGBD_RESOLVE(avformat, avformat_close_input);
    RGBD_RESOLVE(avformat, av_find_best_stream);
    RGBD_RESOLVE(avformat, av_read_frame);
    RGBD_RESOLVE(avformat, av_seek_frame);
    RGBD_RESOLVE(swscale, sws_getContext);
    RGBD_RESOLVE(swscale, sws_setColorspaceDetails);
    RGBD_RESOLVE(swscale, sws_getCoefficients);
    RGBD_RESOLVE(swscale, sws_scale);
    RGBD_RESOLVE(swscale, sws_freeContext);
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 31, 100)
    RGBD_RESOLVE(avcodec, av_packet_side_data_get);
#else
    RGBD_RESOLVE(avformat, av_stream_get_side_data);
#endif
#undef RGBD_RESOLVE
    if (!complete) return;
    // FFmpeg's own logging off for the whole process: errors reach the user as rgbd's one line.
    table.av_log_set_level(AV_LOG_QUIET);
    loaded = &table;
}

const rgbd_ffmpeg *rgbd_ffmpeg_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *rgbd_ffmpeg_failure(void) { return failure; }

const char *rgbd_ffmpeg_library_name(void) {
#ifdef __APPLE__
    return "libavformat." RGBD_TEXT(LIBAVFORMAT_VERSION_MAJOR) ".dylib";
#else
    return "libavformat.so." RGBD_TEXT(LIBAVFORMAT_VERSION_MAJOR);
#endif
}

void *rgbd_sws_rgb_context(int width, int height, int format, int colorspace, int full_range) {
    const rgbd_ffmpeg *ff = loaded;
    if (!ff) return NULL;
    struct SwsContext *context = ff->sws_getContext(width, height, (enum AVPixelFormat)format, width, height,
                                                    AV_PIX_FMT_RGB24, SWS_BILINEAR, NULL, NULL, NULL);
    if (!context) return NULL;
    if (ff->sws_setColorspaceDetails(context, ff->sws_getCoefficients(colorspace), full_range,
                                     ff->sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16) < 0) {
        ff->sws_freeContext(context);
        return NULL;
    }
    return context;
}

int rgbd_sws_rgb_convert(void *context, const AVFrame *frame, uint8_t *rgb, int rgb_stride) {
    const rgbd_ffmpeg *ff = loaded;
    if (!ff) return 0;
    uint8_t *destinations[4] = {rgb, NULL, NULL, NULL};
    int strides[4] = {rgb_stride, 0, 0, 0};
    return ff->sws_scale((struct SwsContext *)context, (const uint8_t *const *)frame->data, frame->linesize, 0,
                         frame->height, destinations, strides);
}

int rgbd_sws_rgb_convert_planes(void *context, const uint8_t *const *planes, const int *strides, int height,
                                uint8_t *rgb, int rgb_stride) {
    const rgbd_ffmpeg *ff = loaded;
    if (!ff) return 0;
    const uint8_t *sources[4] = {planes[0], planes[1], planes[2], NULL};
    int source_strides[4] = {strides[0], strides[1], strides[2], 0};
    uint8_t *destinations[4] = {rgb, NULL, NULL, NULL};
    int destination_strides[4] = {rgb_stride, 0, 0, 0};
    return ff->sws_scale((struct SwsContext *)context, sources, source_strides, 0, height, destinations,
                         destination_strides);
}

void rgbd_sws_free(void *context) {
    const rgbd_ffmpeg *ff = loaded;
    if (ff && context) ff->sws_freeContext((struct SwsContext *)context);
}

int rgbd_pix_fmt_is_full_range(int format) {
    const rgbd_ffmpeg *ff = loaded;
    if (!ff) return 0;
    const AVPixFmtDescriptor *descriptor = ff->av_pix_fmt_desc_get((enum AVPixelFormat)format);
    return descriptor && descriptor->name && strncmp(descriptor->name, "yuvj", 4) == 0;
}

const int32_t *rgbd_display_matrix(const AVStream *stream) {
    const rgbd_ffmpeg *ff = loaded;
    if (!ff) return NULL;
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 31, 100)
    const AVPacketSideData *side = ff->av_packet_side_data_get(
        stream->codecpar->coded_side_data, stream->codecpar->nb_coded_side_data, AV_PKT_DATA_DISPLAYMATRIX);
    return side && side->size >= 9 * sizeof(int32_t) ? (const int32_t *)side->data : NULL;
#else
    size_t size = 0;
    const uint8_t *data = ff->av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    return data && size >= 9 * sizeof(int32_t) ? (const int32_t *)data : NULL;
#endif
}
