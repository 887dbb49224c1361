#ifndef RGBD_CFFMPEG_H
#define RGBD_CFFMPEG_H
// FFmpeg 5.1+ (libavformat, libavcodec, libswscale, libavutil): the videos of LiDAR scans
// (VideoDecoder) and the HEVC tiles of HEIC photos (HEVCImageDecoder), loaded at first use
// rather than linked.
//
// Linked, FFmpeg's libraries and the ~100 libraries they depend on (every codec's) were
// loaded at every start of rgbd, for every command (158 libraries in all, against 54): most
// of `rgbd --version`'s start-up time, and twice its resident memory (41 MB against 20 MB;
// docs/architecture.md has the measurement). So rgbd is not linked with them:
// rgbd_ffmpeg_load() `dlopen`s them when the first video is opened and resolves the few
// functions rgbd calls into a table, `rgbd_ffmpeg`, through which the Swift code calls them.
//
// The types, constants and struct layouts still come from the system's FFmpeg headers (the
// fields of AVFrame, AVStream, … move between major versions): the loader opens the major
// versions those headers describe (libavformat.so.59 for LIBAVFORMAT_VERSION_MAJOR 59, or
// libavformat.59.dylib), falls back to the unversioned names, and refuses a library whose
// major version (its avformat_version() …) differs from the headers'.
//
// The inline functions spell for Swift what it cannot import: FFmpeg's error and timestamp
// macros.
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

/// FFmpeg's functions that rgbd calls, resolved from the loaded libraries. Each member has
/// the type of the function it is named after, as the headers declare it.
typedef struct rgbd_ffmpeg {
    // libavutil
    __typeof__(av_frame_alloc) *_Nonnull av_frame_alloc;
    __typeof__(av_frame_free) *_Nonnull av_frame_free;
    __typeof__(av_frame_unref) *_Nonnull av_frame_unref;
    __typeof__(av_dict_set) *_Nonnull av_dict_set;
    __typeof__(av_dict_free) *_Nonnull av_dict_free;
    __typeof__(av_strerror) *_Nonnull av_strerror;
    __typeof__(av_log_set_level) *_Nonnull av_log_set_level;
    __typeof__(av_display_rotation_get) *_Nonnull av_display_rotation_get;
    __typeof__(av_pix_fmt_desc_get) *_Nonnull av_pix_fmt_desc_get;
    // libavcodec
    __typeof__(avcodec_get_name) *_Nonnull avcodec_get_name;
    __typeof__(avcodec_find_decoder) *_Nonnull avcodec_find_decoder;
    __typeof__(avcodec_alloc_context3) *_Nonnull avcodec_alloc_context3;
    __typeof__(avcodec_free_context) *_Nonnull avcodec_free_context;
    __typeof__(avcodec_parameters_to_context) *_Nonnull avcodec_parameters_to_context;
    __typeof__(avcodec_open2) *_Nonnull avcodec_open2;
    __typeof__(avcodec_send_packet) *_Nonnull avcodec_send_packet;
    __typeof__(avcodec_receive_frame) *_Nonnull avcodec_receive_frame;
    __typeof__(avcodec_flush_buffers) *_Nonnull avcodec_flush_buffers;
    __typeof__(av_packet_alloc) *_Nonnull av_packet_alloc;
    __typeof__(av_packet_free) *_Nonnull av_packet_free;
    __typeof__(av_packet_unref) *_Nonnull av_packet_unref;
    __typeof__(av_new_packet) *_Nonnull av_new_packet;
    // libavformat
    __typeof__(avformat_open_input) *_Nonnull avformat_open_input;
    __typeof__(avformat_find_stream_info) *_Nonnull avformat_find_stream_info;
    __typeof__(avformat_close_input) *_Nonnull avformat_close_input;
    __typeof__(av_find_best_stream) *_Nonnull av_find_best_stream;
    __typeof__(av_read_frame) *_Nonnull av_read_frame;
    __typeof__(av_seek_frame) *_Nonnull av_seek_frame;
    // libswscale
    __typeof__(sws_getContext) *_Nonnull sws_getContext;
    __typeof__(sws_setColorspaceDetails) *_Nonnull sws_setColorspaceDetails;
    __typeof__(sws_getCoefficients) *_Nonnull sws_getCoefficients;
    __typeof__(sws_scale) *_Nonnull sws_scale;
    __typeof__(sws_freeContext) *_Nonnull sws_freeContext;
    // The stream's side data (the display matrix): its home moved in FFmpeg 6.1, from the
    // stream (gone in 7.0) to its codec parameters.
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 31, 100)
    __typeof__(av_packet_side_data_get) *_Nonnull av_packet_side_data_get;
#else
    __typeof__(av_stream_get_side_data) *_Nonnull av_stream_get_side_data;
#endif
} rgbd_ffmpeg;

/// Loads FFmpeg's libraries and resolves the table, once per process (thread-safe; FFmpeg's
/// logging is switched off on success). NULL when they cannot be loaded: then
/// rgbd_ffmpeg_failure() says why.
///
/// Where: the directory named by the environment variable RGBD_FFMPEG_DIR when it is set,
/// else the dynamic loader's search path (on macOS then Homebrew's and MacPorts'
/// directories, which it does not search).
const rgbd_ffmpeg *_Nullable rgbd_ffmpeg_load(void);

/// Why rgbd_ffmpeg_load() failed, in words (`libavformat.so.59: cannot open shared object
/// file: …`); empty before a failure.
const char *_Nonnull rgbd_ffmpeg_failure(void);

/// The libavformat file name the loader tries first (`libavformat.so.59`), for messages.
const char *_Nonnull rgbd_ffmpeg_library_name(void);

/// AVERROR(EAGAIN): the decoder wants more input before it can give a frame.
static inline int rgbd_averror_again(void) { return AVERROR(EAGAIN); }
/// AVERROR_EOF: the end of the input (or of the decoder's output, once drained).
static inline int rgbd_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR(ENOENT): no such file.
static inline int rgbd_averror_no_entry(void) { return AVERROR(ENOENT); }
/// AVERROR(EACCES): permission denied.
static inline int rgbd_averror_access(void) { return AVERROR(EACCES); }
/// AVERROR(EINVAL): invalid argument (also what a format outside the whitelist gives).
static inline int rgbd_averror_invalid(void) { return AVERROR(EINVAL); }
/// AV_NOPTS_VALUE: "no timestamp".
static inline int64_t rgbd_av_nopts(void) { return AV_NOPTS_VALUE; }

// The helpers below call FFmpeg through the loaded table: they are for after
// rgbd_ffmpeg_load() succeeded (before, they do nothing and give NULL or 0).

/// A libswscale context converting `width` × `height` pictures of pixel format `format`
/// to packed 8-bit RGB, reading Y′CbCr with the coefficients of `colorspace` (an
/// AVColorSpace value libswscale has coefficients for: BT.709, FCC, BT.601, SMPTE 240M,
/// BT.2020) and limited or full range; NULL when libswscale cannot. Behind `void *`
/// because FFmpeg 8 made SwsContext a public struct (and its flags an enum), which
/// Swift would import differently across versions.
void *_Nullable rgbd_sws_rgb_context(int width, int height, int format,
                                     int colorspace, int full_range);

/// Converts a picture's planes to packed RGB rows of `rgb_stride` bytes; the number of
/// rows written.
int rgbd_sws_rgb_convert(void *_Nonnull context, const AVFrame *_Nonnull frame,
                         uint8_t *_Nonnull rgb, int rgb_stride);

/// Converts three planes (Y′, Cb, Cr, rows of `strides` bytes) of the pixel format the
/// context was made for to packed RGB, as rgbd_sws_rgb_convert does a frame's; the
/// number of rows written.
int rgbd_sws_rgb_convert_planes(void *_Nonnull context, const uint8_t *_Nonnull const *_Nonnull planes,
                                const int *_Nonnull strides, int height, uint8_t *_Nonnull rgb, int rgb_stride);

/// Frees a context of rgbd_sws_rgb_context (NULL: nothing).
void rgbd_sws_free(void *_Nullable context);

/// Whether `format` is one of the deprecated full-range `yuvj` formats.
int rgbd_pix_fmt_is_full_range(int format);

/// The stream's display matrix (nine 16.16 / 2.30 fixed-point values), or NULL when it has none.
const int32_t *_Nullable rgbd_display_matrix(const AVStream *_Nonnull stream);
#endif
