#ifndef RGBD_CFFMPEG_SHIM_H
#define RGBD_CFFMPEG_SHIM_H
// FFmpeg 5.1+ (libavformat, libavcodec, libswscale, libavutil): the videos of LiDAR scans
// (VideoDecoder). The inline functions spell for Swift what it cannot import: FFmpeg's
// error and timestamp macros, and the display matrix, whose home moved in FFmpeg 6.1
// (from the stream's side data to its codec parameters; the old call is gone in 7.0).
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

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

/// A libswscale context converting `width` × `height` pictures of pixel format `format`
/// to packed 8-bit RGB, reading Y′CbCr with the coefficients of `colorspace` (an
/// AVColorSpace value libswscale has coefficients for: BT.709, FCC, BT.601, SMPTE 240M,
/// BT.2020) and limited or full range; NULL when libswscale cannot. Behind `void *`
/// because FFmpeg 8 made SwsContext a public struct (and its flags an enum), which
/// Swift would import differently across versions.
static inline void *rgbd_sws_rgb_context(int width, int height, int format, int colorspace, int full_range) {
    struct SwsContext *context = sws_getContext(width, height, (enum AVPixelFormat)format, width, height,
                                                AV_PIX_FMT_RGB24, SWS_BILINEAR, NULL, NULL, NULL);
    if (!context) return NULL;
    if (sws_setColorspaceDetails(context, sws_getCoefficients(colorspace), full_range,
                                 sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16) < 0) {
        sws_freeContext(context);
        return NULL;
    }
    return context;
}

/// Converts a picture's planes to packed RGB rows of `rgb_stride` bytes; the number of
/// rows written.
static inline int rgbd_sws_rgb_convert(void *context, const AVFrame *frame, uint8_t *rgb, int rgb_stride) {
    uint8_t *destinations[4] = {rgb, NULL, NULL, NULL};
    int strides[4] = {rgb_stride, 0, 0, 0};
    return sws_scale((struct SwsContext *)context, (const uint8_t *const *)frame->data, frame->linesize,
                     0, frame->height, destinations, strides);
}

/// Frees a context of rgbd_sws_rgb_context (NULL: nothing).
static inline void rgbd_sws_free(void *context) { sws_freeContext((struct SwsContext *)context); }

/// Whether `format` is one of the deprecated full-range `yuvj` formats.
static inline int rgbd_pix_fmt_is_full_range(int format) {
    const AVPixFmtDescriptor *descriptor = av_pix_fmt_desc_get((enum AVPixelFormat)format);
    return descriptor && descriptor->name && strncmp(descriptor->name, "yuvj", 4) == 0;
}

/// The stream's display matrix (nine 16.16 / 2.30 fixed-point values), or NULL when it has none.
static inline const int32_t *rgbd_display_matrix(const AVStream *stream) {
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 31, 100)
    const AVPacketSideData *side = av_packet_side_data_get(stream->codecpar->coded_side_data,
                                                           stream->codecpar->nb_coded_side_data,
                                                           AV_PKT_DATA_DISPLAYMATRIX);
    return side && side->size >= 9 * sizeof(int32_t) ? (const int32_t *)side->data : NULL;
#else
    size_t size = 0;
    const uint8_t *data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    return data && size >= 9 * sizeof(int32_t) ? (const int32_t *)data : NULL;
#endif
}
#endif
