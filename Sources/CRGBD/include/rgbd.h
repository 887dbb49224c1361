/*
 * rgbd.h — the C interface of rgbd (librgbd / libRGBDKit), the one source of truth.
 *
 * Rectifies iPhone depth captures (JSON calibration + depth map, JPEG or HEIC photo) with Apple's
 * lens-distortion lookup-table model and back-projects them to point clouds.
 *
 * Conventions
 *  - Every function returning int returns RGBD_OK (0) on success and an RGBD_ERROR_*
 *    code otherwise; rgbd_last_error() then describes the failure (one line, naming the
 *    file and key where it applies). Outputs are written only on success.
 *  - Handles are opaque. Every *_load / *_create has a *_destroy that accepts NULL.
 *  - Output buffers are allocated by the caller; each function states the size it
 *    needs and takes the caller's size to check it. rgbd never keeps a pointer it was
 *    given beyond the call, and never frees caller memory.
 *  - Strings passed in are NUL-terminated UTF-8, borrowed for the duration of the call.
 *    Strings returned are owned by rgbd (see each function).
 *  - All functions are safe to call from several threads at once, also on the same
 *    capture handle (a handle is immutable; lazily computed results are locked).
 *  - Images are row-major, rows packed without padding: color is H×W×3 uint8 RGB,
 *    depth is H×W float32 meters along the optical axis, NaN = no depth.
 *  - Intrinsics follow the OpenCV pinhole model in pixels of the image they describe,
 *    pixel coordinates being integer pixel indices; points are meters in the OpenCV
 *    camera frame (x right, y down, z forward) unless options say otherwise.
 */
#ifndef RGBD_H
#define RGBD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. Each failure has one, whichever way the input came (a file or bytes):
 *  RGBD_ERROR_IO               a file is missing, cannot be read (a directory, a FIFO,
 *                              more than 512 MiB) or written; no photo beside the JSON.
 *  RGBD_ERROR_INVALID_JSON     the capture JSON is not JSON: empty or blank, cut short
 *                              anywhere (in the calibration, in the middle of the depth
 *                              map or of a number), a syntax error, or another kind of
 *                              file (a photo given as the JSON).
 *  RGBD_ERROR_INVALID_CAPTURE  valid JSON, but not a capture rgbd can use: a key missing,
 *                              a value of the wrong type or out of range (ragged depth
 *                              rows, a string in the depth map, an implausible focal
 *                              length), a key given twice, transposed reference sizes.
 *  RGBD_ERROR_INVALID_IMAGE    the photo or a depth image cannot be decoded, or its size
 *                              contradicts the calibration (rotated pixels, an aspect ratio
 *                              no crop or rounding explains).
 *  RGBD_ERROR_INVALID_ARGUMENT an argument of the call is wrong: NULL where a pointer is
 *                              needed, a buffer too small, an option out of range. */
#define RGBD_OK 0
#define RGBD_ERROR_IO 1               /* a file could not be read or written */
#define RGBD_ERROR_INVALID_JSON 2     /* the JSON is not valid JSON (empty, cut short, syntax) */
#define RGBD_ERROR_INVALID_CAPTURE 3  /* valid JSON; a key is missing or holds the wrong value */
#define RGBD_ERROR_INVALID_IMAGE 4    /* an image cannot be decoded or has the wrong size */
#define RGBD_ERROR_INVALID_ARGUMENT 5 /* NULL where a pointer is needed, buffer too small, ... */
#define RGBD_ERROR_INVALID_SCENE 6    /* a scan's table, frame, pose or archive is malformed */

/* The library version, e.g. "0.1.0". Static storage: never freed, never changes. */
const char *rgbd_version(void);

/* The message of the last failed call on the calling thread ("" if none). Owned by
 * rgbd; valid until the next failing rgbd call on the same thread. */
const char *rgbd_last_error(void);

/* ---- Captures --------------------------------------------------------------------- */

/* A loaded capture: calibration, depth map and color image as captured. Immutable. */
typedef struct rgbd_capture rgbd_capture;

/* Loads a capture from a JSON file and a photo, JPEG or HEIC/HEIF (recognised by content).
 * image_path may be NULL: the photo beside the JSON with the same stem (.jpg/.jpeg, else
 * .heic/.heif, any case). A Portrait photo given as json_path with image_path NULL is a
 * capture by itself (recognised by content). On success *out receives a handle
 * the caller owns and releases with rgbd_capture_destroy. */
int rgbd_capture_load(const char *json_path, const char *image_path, rgbd_capture **out);

/* Loads a capture from bytes in memory (the JSON text and the photo file's bytes, JPEG or
 * HEIC/HEIF), borrowed for the call. name (may be NULL) stands for the files in error messages
 * (NAME.json, NAME.jpg). */
int rgbd_capture_load_memory(const uint8_t *json, size_t json_size, const uint8_t *jpeg, size_t jpeg_size,
                             const char *name, rgbd_capture **out);

/* Loads a Portrait photo (a HEIC or JPEG that holds a depth image and Apple's depth
 * metadata, as iPhones write with depth capture on) from the file's bytes alone: the
 * photo is the color image, its depth image the depth map, its XMP the calibration.
 * rgbd_capture_load(path, NULL, out) does the same for a file. name (may be NULL) stands
 * for the file in error messages. A photo without depth fails: "NAME holds no depth image". */
int rgbd_capture_load_photo_memory(const uint8_t *photo, size_t photo_size, const char *name, rgbd_capture **out);

/* Releases a capture. Accepts NULL. */
void rgbd_capture_destroy(rgbd_capture *capture);

/* Sizes in pixels of the color image, the depth map, and the calibration's reference
 * dimensions. Any of the output pointers may be NULL. */
int rgbd_capture_color_size(const rgbd_capture *capture, int32_t *width, int32_t *height);
int rgbd_capture_depth_size(const rgbd_capture *capture, int32_t *width, int32_t *height);
int rgbd_capture_reference_size(const rgbd_capture *capture, int32_t *width, int32_t *height);

/* Pinhole intrinsics, in pixels of the image of size width × height. */
typedef struct rgbd_intrinsics {
    double fx, fy, cx, cy;
    int32_t width, height;
} rgbd_intrinsics;

/* Which intrinsics rgbd_capture_intrinsics reports. */
#define RGBD_INTRINSICS_REFERENCE 0 /* as recorded, at the reference dimensions */
#define RGBD_INTRINSICS_COLOR 1     /* of the rectified color image (scaled to it) */
#define RGBD_INTRINSICS_DEPTH 2     /* of the rectified depth map (scaled to it) */

int rgbd_capture_intrinsics(const rgbd_capture *capture, int32_t which, rgbd_intrinsics *out);

/* The lens distortion center at the reference dimensions, in pixels. */
int rgbd_capture_distortion_center(const rgbd_capture *capture, double *x, double *y);

/* The lookup tables: inverse = 0 for lens_distortion_lookup_table (rectified →
 * distorted), 1 for the inverse table (0 entries if the capture had none). First call
 * with values = NULL to get *count, then with a buffer of at least *count floats. */
int rgbd_capture_lookup_table(const rgbd_capture *capture, int32_t inverse, float *values, size_t capacity,
                              size_t *count);

/* The images as captured (distorted): color needs width*height*3 bytes, depth
 * width*height floats (NaN = no depth). size/count is the caller buffer's size. */
int rgbd_capture_color(const rgbd_capture *capture, uint8_t *rgb, size_t size);
int rgbd_capture_depth(const rgbd_capture *capture, float *depth, size_t count);

/* The rectified images, same sizes as captured. The first call rectifies both (on all
 * cores) and keeps the result with the handle. */
int rgbd_capture_rectified_color(const rgbd_capture *capture, uint8_t *rgb, size_t size);
int rgbd_capture_rectified_depth(const rgbd_capture *capture, float *depth, size_t count);

/* The rectified color and depth on one pixel grid, as `rgbd rectify --align-to` writes them:
 * pixel (u, v) of both sees the same point, and *intrinsics (may be NULL) describes both.
 * align_to is RGBD_ALIGN_DEPTH or RGBD_ALIGN_COLOR (defined with rgbd_rectify_options below):
 *  RGBD_ALIGN_DEPTH  the depth map's size: the depth of rgbd_capture_rectified_depth, the
 *                    rectified color averaged over each depth pixel's footprint (the colors
 *                    of rgbd_capture_point_cloud). Refused (RGBD_ERROR_INVALID_ARGUMENT) when
 *                    the depth map is larger than the photo along an axis.
 *  RGBD_ALIGN_COLOR  the photo's size: the color of rgbd_capture_rectified_color, the depth
 *                    map rectified straight onto the photo's grid, only depths within the
 *                    rectification's blend step of each other blended (no depth invented
 *                    between a foreground and a background); holes and the outside are NaN.
 * First call with rgb and depth NULL to get the grid's size (intrinsics->width, ->height),
 * then with buffers of width*height*3 bytes and width*height floats (either may be NULL to
 * skip it); rgb_size and depth_count are the buffers' sizes. The first call with a buffer
 * computes the pair (on all cores) and keeps it with the handle (the last alignment asked). */
int rgbd_capture_aligned(const rgbd_capture *capture, int32_t align_to, uint8_t *rgb, size_t rgb_size,
                         float *depth, size_t depth_count, rgbd_intrinsics *intrinsics);

/* What the photo's EXIF says about place, heading and gravity (docs/geo.md). Each has_*
 * is 1 when the photo records it (and rgbd can use it), else 0 and its numbers are NaN;
 * an unrecorded altitude or positioning error is NaN too. */
typedef struct rgbd_geo {
    int32_t has_location;
    double latitude, longitude; /* degrees north, east (WGS84) */
    double altitude;            /* meters above mean sea level (not the ellipsoid) */
    double horizontal_error;    /* meters, as the phone recorded it */
    int32_t has_heading;
    double heading;             /* degrees clockwise from north: the camera's direction */
    int32_t heading_magnetic;   /* 1: from magnetic north (no declination applied), 0: true north */
    int32_t has_gravity;
    double down[3];             /* unit vector toward the ground, OpenCV camera axes */
    double pitch, roll;         /* degrees: optical axis above the horizon; gravity from the image's +y toward +x */
    double gravity_g;           /* |acceleration| in g (near 1 when the phone was still) */
} rgbd_geo;

int rgbd_capture_geo(const rgbd_capture *capture, rgbd_geo *out);

/* ---- Point clouds ----------------------------------------------------------------- */

/* Options of back-projection, as rgbd cloud's flags. */
typedef struct rgbd_cloud_options {
    float min_depth;      /* meters; points nearer are dropped (default 0) */
    float max_depth;      /* meters; points farther are dropped (default +infinity) */
    int32_t stride;       /* keep every stride-th depth pixel in each direction (default 1) */
    int32_t keep_edges;   /* nonzero: keep points on depth discontinuities (default 0) */
    float edge_threshold; /* relative depth jump to a 4-neighbor that marks an edge (0.05) */
    int32_t normals;      /* nonzero: compute normals toward the camera (default 0) */
    int32_t axes;         /* RGBD_AXES_OPENCV (default) or RGBD_AXES_OPENGL: (X, -Y, -Z) */
    int32_t frame;        /* RGBD_FRAME_CAMERA (default), RGBD_FRAME_LEVEL or RGBD_FRAME_ENU (docs/geo.md) */
} rgbd_cloud_options;

#define RGBD_AXES_OPENCV 0
#define RGBD_AXES_OPENGL 1

/* Where points are placed (rgbd cloud --frame): the camera frame; level (z up, gravity from
 * the photo's accelerometer vector, y the camera's heading); ENU (east, north, up meters at
 * the photo's GPS position, turned by its compass heading). A photo without what the
 * frame needs fails with a message naming it; the other frames need axes OPENCV. */
#define RGBD_FRAME_CAMERA 0
#define RGBD_FRAME_LEVEL 1
#define RGBD_FRAME_ENU 2

/* Fills *options with the defaults above. */
void rgbd_cloud_options_default(rgbd_cloud_options *options);

/* The number of points rgbd_capture_point_cloud produces with these options (NULL =
 * defaults). */
int rgbd_capture_point_cloud_count(const rgbd_capture *capture, const rgbd_cloud_options *options,
                                   size_t *count);

/* Back-projects the rectified depth: points (count*3 floats, x y z per point), colors
 * (count*3 bytes RGB, averaged over each depth pixel's footprint in the rectified
 * color image; the nearest color pixel along an axis where the color image is the
 * smaller) and, if normals is not NULL and options->normals is set, normals
 * (count*3 floats). capacity is the number of points the buffers hold; it must be at
 * least the count from rgbd_capture_point_cloud_count. *written receives the count. */
int rgbd_capture_point_cloud(const rgbd_capture *capture, const rgbd_cloud_options *options, float *points,
                             uint8_t *colors, float *normals, size_t capacity, size_t *written);

/* Writes the capture's point cloud as PLY (binary little-endian, or ASCII if ascii is
 * nonzero) to path, atomically (temporary name, then rename), creating missing parent
 * directories. */
int rgbd_capture_write_ply(const rgbd_capture *capture, const rgbd_cloud_options *options, const char *path,
                           int32_t ascii);

/* Writes any points as PLY: points count*3 floats, colors count*3 bytes (may be NULL:
 * white), normals count*3 floats (may be NULL: no normal properties). Atomic, and
 * creates missing parent directories, like rgbd_capture_write_ply. */
int rgbd_write_ply(const char *path, const float *points, const uint8_t *colors, const float *normals,
                   size_t count, int32_t ascii);

/* ---- Preview ---------------------------------------------------------------------- */

/* The sheet `rgbd preview` draws, 8-bit RGB: sheet_width pixels wide (0 = the default
 * 1600; 480 to 8000), depth colored from min_depth to max_depth meters (max_depth 0 =
 * chosen from the depth map). First call with rgb = NULL to get *width and *height (may
 * be NULL), then with a buffer of width*height*3 bytes; size is the buffer's size. */
int rgbd_capture_preview(const rgbd_capture *capture, int32_t sheet_width, float min_depth, float max_depth,
                         uint8_t *rgb, size_t size, int32_t *width, int32_t *height);

/* As rgbd_capture_preview, and with `upright` nonzero the panels are turned as the photo
 * asks to be shown (its EXIF or HEIF orientation; `rgbd preview --upright`): a portrait
 * photo gives tall panels and a taller sheet (ask for *width and *height first). A
 * mirroring orientation is drawn as stored. */
int rgbd_capture_preview_upright(const rgbd_capture *capture, int32_t sheet_width, float min_depth, float max_depth,
                                 int32_t upright, uint8_t *rgb, size_t size, int32_t *width, int32_t *height);

/* ---- Rectifying your own frames --------------------------------------------------- */

/* Calibration values for rectifying arbitrary frames (a video from the same camera). */
typedef struct rgbd_lens {
    int32_t reference_width, reference_height; /* intrinsic_matrix_reference_dimensions */
    double center_x, center_y;                 /* lens_distortion_center at the reference */
    const float *table;                        /* lens_distortion_lookup_table, borrowed */
    size_t table_count;                        /* at least 2 */
} rgbd_lens;

/* Rectifies an 8-bit image of 1, 3 or 4 interleaved channels (bilinear, black outside):
 * src and dst are width*height*channels bytes and must not overlap. The lens is scaled
 * to the image's size; an image whose size is the reference size transposed (a rotated
 * frame) is rejected, as are centers far outside the reference image. */
int rgbd_rectify_u8(const rgbd_lens *lens, const uint8_t *src, int32_t width, int32_t height, int32_t channels,
                    uint8_t *dst);

/* Rectifies a float32 depth map (NaN = no depth) without blending across edges larger
 * than max_relative_step (0 = default 0.05). src and dst are width*height floats. */
int rgbd_rectify_f32(const rgbd_lens *lens, const float *src, int32_t width, int32_t height,
                     float max_relative_step, float *dst);

/* ---- Rectifying video frames ------------------------------------------------------ */

/* A rectifier for the frames of one camera at one frame size (a video, a camera stream):
 * created once, then applied to any number of frames. It keeps the source position of
 * every pixel (4 bytes per pixel, 5 with an NV12 frame's chroma plane) as long as that
 * fits max_map_bytes, and computes positions per frame beyond it; results are the same
 * either way, and equal rgbd_rectify_u8 / rgbd_rectify_f32 on the same frame bit for bit.
 * A handle is immutable: the apply functions may run on one handle from several threads
 * at once. Each call spreads its rows over all cores.
 *
 * Planes: rows are row_bytes apart (at least a row's bytes: width x channels, x 4 for
 * float32; a multiple of 4 for float32), as in a CVPixelBuffer plane; the bytes between
 * rows are never read nor written. A plane buffer of size bytes must hold
 * (height - 1) x row_bytes bytes plus one row. Destinations must not overlap sources or
 * each other.
 *
 * NV12 (420v / 420f): a width x height luminance plane (1 byte per pixel) and a
 * ((width + 1) / 2) x ((height + 1) / 2) chroma plane of interleaved Cb Cr pairs. Chroma
 * sample (i, j) stands for the luminance-grid point (2i, 2j + 1/2): left-sited, as
 * kCVImageBufferChromaLocation_Left (H.264/HEVC video, iPhone camera buffers). */
typedef struct rgbd_rectifier rgbd_rectifier;

/* The default bound of a rectifier's precomputed positions: 64 MiB. */
#define RGBD_RECTIFIER_MAP_BYTES_DEFAULT 67108864

/* Creates a rectifier for width x height frames of the camera described by lens (scaled
 * to that size, checked as rgbd_rectify_u8 checks it). max_relative_step: depth only, as
 * rgbd_rectify_f32 (0 = default 0.05). max_map_bytes: the most memory kept for
 * precomputed positions (RGBD_RECTIFIER_MAP_BYTES_DEFAULT; 0 = compute positions for
 * every frame). On success *out receives a handle released with rgbd_rectifier_destroy. */
int rgbd_rectifier_create(const rgbd_lens *lens, int32_t width, int32_t height, float max_relative_step,
                          size_t max_map_bytes, rgbd_rectifier **out);

/* Releases a rectifier. Accepts NULL. */
void rgbd_rectifier_destroy(rgbd_rectifier *rectifier);

/* The bytes the rectifier holds, and the size of an NV12 frame's chroma plane in pixels
 * (Cb Cr pairs). Any of the output pointers may be NULL. */
int rgbd_rectifier_info(const rgbd_rectifier *rectifier, size_t *bytes_held, int32_t *chroma_width,
                        int32_t *chroma_height);

/* Rectifies an 8-bit frame of channels (1 to 4) interleaved samples per pixel, bilinear,
 * black outside: 1 luminance or a mask, 2 interleaved chroma, 3 RGB, 4 BGRA/RGBA. */
int rgbd_rectifier_apply_u8(const rgbd_rectifier *rectifier, int32_t channels, const uint8_t *src,
                            size_t src_row_bytes, size_t src_size, uint8_t *dst, size_t dst_row_bytes,
                            size_t dst_size);

/* Rectifies a float32 depth map (NaN = no depth) as rgbd_rectify_f32 does. Row strides
 * and sizes in bytes. */
int rgbd_rectifier_apply_f32(const rgbd_rectifier *rectifier, const float *src, size_t src_row_bytes,
                             size_t src_size, float *dst, size_t dst_row_bytes, size_t dst_size);

/* Rectifies an NV12 frame: both planes in one call, no conversion to RGB. */
int rgbd_rectifier_apply_nv12(const rgbd_rectifier *rectifier, const uint8_t *src_y, size_t src_y_row_bytes,
                              size_t src_y_size, const uint8_t *src_cbcr, size_t src_cbcr_row_bytes,
                              size_t src_cbcr_size, uint8_t *dst_y, size_t dst_y_row_bytes, size_t dst_y_size,
                              uint8_t *dst_cbcr, size_t dst_cbcr_row_bytes, size_t dst_cbcr_size);

/* ---- Scenes (scans) ---------------------------------------------------------------- */

/* A scan opened as a scene (docs/scans.md): a Stray Scanner folder, a Record3D .r3d file
 * or EXR + JPG folder, recognised by content. Its frames (those with depth and a pose)
 * are numbered 0 .. count-1 in order. A handle keeps its place in the scan: frames read
 * in increasing order are read in one pass. Not for two threads at once. */
typedef struct rgbd_scene rgbd_scene;

/* Opens a scan; *out receives a handle released with rgbd_scene_destroy. */
int rgbd_scene_open(const char *path, rgbd_scene **out);

/* Releases a scene. Accepts NULL. */
void rgbd_scene_destroy(rgbd_scene *scene);

/* The number of frames, and the sizes of color frames (0 × 0 for a depth-only scene)
 * and depth maps. Any of the output pointers may be NULL. */
int rgbd_scene_info(const rgbd_scene *scene, size_t *frame_count, int32_t *color_width, int32_t *color_height,
                    int32_t *depth_width, int32_t *depth_height);

/* One frame's small parts: its number in the scan, seconds since the first frame (NaN when
 * unknown), the camera-to-world pose as a 4x4 row-major matrix with OpenCV camera axes
 * (x right, y down, z forward) in the scan's world, and the intrinsics at the color and
 * depth sizes. */
typedef struct rgbd_frame_info {
    int64_t index;
    double time;
    double pose[16];
    rgbd_intrinsics color;
    rgbd_intrinsics depth;
} rgbd_frame_info;

int rgbd_scene_frame_info(const rgbd_scene *scene, size_t frame, rgbd_frame_info *out);

/* Reads frame `frame`'s pixels into caller buffers; any buffer may be NULL to skip it.
 * depth: depth_width*depth_height floats, meters, NaN = no depth; confidence:
 * depth_width*depth_height bytes, 0/1/2 (all 255 when the scan has no confidence);
 * rgb: color_width*color_height*3 bytes. Sizes are the buffers' element counts. */
int rgbd_scene_read_frame(rgbd_scene *scene, size_t frame, float *depth, size_t depth_count,
                          uint8_t *confidence, size_t confidence_size, uint8_t *rgb, size_t rgb_size);

/* ---- Poses: refined against the depth (rgbd refine), or from a trajectory file --------- */

/* Options of rgbd_scene_refine, as rgbd refine's flags (docs/cli.md). */
typedef struct rgbd_refine_options {
    double voxel;            /* the tracked model's voxel, meters, 0.001 to 1; 0 = rgbd fuse's automatic
                                voxel, at least 0.008 (default 0) */
    float min_depth;         /* meters; depths nearer are not used (default 0) */
    float max_depth;         /* meters; depths farther are not used (default +infinity) */
    int32_t min_confidence;  /* lowest ARKit confidence used, 0..2 (default 2) */
    int64_t max_memory_mb;   /* the most memory the model may take; 0 = half the machine's */
} rgbd_refine_options;

/* Fills *options with the defaults above. */
void rgbd_refine_options_default(rgbd_refine_options *options);

/* What a refinement found (rgbd refine's summary). Residuals: the median over frames of
 * each frame's median distance to the model, meters, started from the recorded motion
 * (before) and refined (after). */
typedef struct rgbd_refine_report {
    size_t frames;           /* the scene's frames */
    size_t tracked;          /* frames aligned to the model (all but the first) */
    size_t undecided;        /* frames where the depth left a direction free (recorded motion kept) */
    size_t corrected;        /* frames whose recorded motion the depth contradicted (jumps undone) */
    double residual_before;
    double residual_after;
    double voxel;            /* the model's voxel and truncation, meters */
    double truncation;
} rgbd_refine_report;

/* Refines the scene's poses against its depth (options NULL = defaults) and writes them to
 * poses: frame_count 4x4 row-major camera-to-world matrices (OpenCV camera axes, the
 * scene's world), in frame order; pose_capacity is the number of matrices poses holds, at
 * least the frame count. report may be NULL. The scene keeps its own poses (set them with
 * rgbd_scene_set_poses). Uses all processors; the result does not depend on their number. */
int rgbd_scene_refine(rgbd_scene *scene, const rgbd_refine_options *options, double *poses, size_t pose_capacity,
                      rgbd_refine_report *report);

/* Replaces the scene's poses with count 4x4 row-major camera-to-world matrices (OpenCV
 * camera axes), one per frame in order (count must be the frame count); source says where
 * they come from (written into what is made from the scene; NULL: "set through the C
 * interface"). The rotations must be rotations and every number finite. */
int rgbd_scene_set_poses(rgbd_scene *scene, const double *poses, size_t count, const char *source);

/* Replaces the scene's poses with those of a trajectory file (TUM format, as rgbd refine
 * writes it), matched to frames by time (seconds since the first frame, within 0.5 ms);
 * frames without a pose are left out (the frame count drops: rgbd_scene_info), and
 * *missing (may be NULL) receives how many. A file that matches no frame is an error. */
int rgbd_scene_load_poses(rgbd_scene *scene, const char *path, size_t *missing);

/* ---- rgbd rectify's output files -------------------------------------------------- */

/* The options of rgbd_rectify_files, as rgbd rectify's flags. */
typedef struct rgbd_rectify_options {
    int32_t align_to;      /* RGBD_ALIGN_NONE (default), RGBD_ALIGN_DEPTH or RGBD_ALIGN_COLOR: color and
                              depth (and matte) pixel-aligned at the depth map's or the photo's size */
    int32_t upright;       /* nonzero: turn outputs and intrinsics as the photo asks to be shown (EXIF
                              orientation, HEIF rotation; mirroring orientations are left, with a warning) */
    int32_t crop_valid;    /* nonzero: crop to the largest rectangle of valid pixels, intrinsics shifted */
    int32_t small_png;     /* nonzero: smaller PNGs, much slower to write */
    float max_blend_step;  /* rectification: relative depth step never blended across (default 0.05) */
    float max_valid_depth; /* meters; depths beyond are no depth (default 1000) */
} rgbd_rectify_options;

#define RGBD_ALIGN_NONE 0
#define RGBD_ALIGN_DEPTH 1
#define RGBD_ALIGN_COLOR 2

/* Fills *options with the defaults above. */
void rgbd_rectify_options_default(rgbd_rectify_options *options);

/* What `rgbd rectify` does for one capture: rectifies it and writes into directory (created
 * if missing) NAME.color.png, NAME.depth.png (16-bit millimeters), NAME.depth.tiff (float32
 * meters), NAME.intrinsics.json (the sidecar; a Portrait photo's depth accuracy as
 * depth_accuracy) and, for a Portrait photo with a matte, NAME.matte.png: all of them or
 * none (temporary names, renamed when complete). NAME is json_path's name without its
 * extension. json_path is a capture JSON (image_path NULL: the photo beside it) or a Portrait
 * photo (image_path NULL). options NULL = defaults. If warnings is not NULL, *warnings
 * receives what rgbd rectify reports as warnings (discarded depth markers, an aspect ratio
 * explained by a crop, a mirroring orientation), one per line, "" if none: owned by rgbd,
 * valid until this thread's next call of a function that returns a string this way. */
int rgbd_rectify_files(const char *json_path, const char *image_path, const char *directory,
                       const rgbd_rectify_options *options, const char **warnings);

/* A Portrait photo's depth accuracy as its metadata says it ("absolute", or "relative": the
 * depth's scale is not guaranteed), "" for other captures; the sidecar's depth_accuracy.
 * Owned by rgbd, valid until this thread's next call of a function that returns a string
 * this way (rgbd_rectify_files, rgbd_capture_depth_accuracy). */
int rgbd_capture_depth_accuracy(const rgbd_capture *capture, const char **accuracy);

/* ---- Scene export (rgbd export; docs/export.md) ------------------------------------ */

/* What rgbd_scene_export writes, as rgbd export's flags. */
typedef struct rgbd_export_options {
    int32_t every;          /* keep every N-th frame (default 1) */
    int32_t max_frames;     /* at most this many frames, spread evenly; 0 = no limit (default) */
    int32_t sharpest;       /* nonzero: the sharpest frame of each window (default 0) */
    int32_t image_format;   /* RGBD_EXPORT_IMAGES_DEFAULT (PNG for tum, JPEG otherwise), _JPEG or _PNG */
    int32_t jpeg_quality;   /* 1 to 100 (default 93) */
    int32_t downscale;      /* shrink the images by this whole factor, 1 to 64 (default 1) */
    int32_t min_confidence; /* depth of lower ARKit confidence is written as unknown, 0 to 2 (default 2) */
    int32_t colmap_text;    /* nonzero: colmap and 3dgs models as text instead of binary (default 0) */
    int32_t overwrite;      /* nonzero: replace a folder that is not empty (default 0) */
    int32_t frame;          /* RGBD_FRAME_CAMERA (the scene's world, default), RGBD_FRAME_LEVEL (a
                               gravity-aligned world turned to z up; a registered scene by its photos'
                               EXIF) or RGBD_FRAME_ENU (registered scenes); docs/geo.md */
    int32_t depth_size;     /* nerfstudio's depth images: RGBD_EXPORT_DEPTH_DEFAULT (the layout's own:
                               the depth map's size for nerfstudio, the images' for open3d and tum),
                               RGBD_EXPORT_DEPTH_SENSOR (the depth map's size; nerfstudio only) or
                               RGBD_EXPORT_DEPTH_IMAGE (the color images' size) */
} rgbd_export_options;

#define RGBD_EXPORT_IMAGES_DEFAULT 0
#define RGBD_EXPORT_IMAGES_JPEG 1
#define RGBD_EXPORT_IMAGES_PNG 2

#define RGBD_EXPORT_DEPTH_DEFAULT 0
#define RGBD_EXPORT_DEPTH_SENSOR 1
#define RGBD_EXPORT_DEPTH_IMAGE 2

/* Fills *options with the defaults above. */
void rgbd_export_options_default(rgbd_export_options *options);

/* Exports the scene into the folder `directory` in the layout `format`: "nerfstudio",
 * "colmap", "3dgs", "open3d" or "tum" (options NULL = defaults). The folder is written
 * whole under a temporary name beside it and renamed at the end; a failure leaves
 * nothing. *frames (may be NULL) receives the number of frames exported. Uses the
 * processors; the scene handle is not used by another call meanwhile. */
int rgbd_scene_export(rgbd_scene *scene, const char *directory, const char *format,
                      const rgbd_export_options *options, size_t *frames);


/* ---- Fusion: a scene into one triangle mesh (rgbd fuse) ------------------------------ */

/* Options of rgbd_scene_fuse, as rgbd fuse's flags (docs/fuse.md). */
typedef struct rgbd_fuse_options {
    double voxel;            /* voxel edge, meters, 0.001 to 1; 0 = chosen from the scene's depth (a
                                depth pixel's width at the median depth, 0.002 to 0.02; default 0) */
    double trunc;            /* truncation distance, meters; 0 = 4 voxels (default 0) */
    float min_depth;         /* meters; depths nearer are not used (default 0) */
    float max_depth;         /* meters; depths farther are not used (default +infinity) */
    int32_t min_confidence;  /* lowest ARKit confidence used, 0..2 (default 2) */
    int32_t keep_edges;      /* nonzero: no flying-pixel filter (default 0) */
    float edge_threshold;    /* relative depth jump to a 4-neighbor that marks an edge (0.05) */
    int32_t every;           /* integrate every N-th frame (default 1) */
    int32_t min_fragment;    /* drop connected pieces of fewer triangles (default 0: keep all) */
    int64_t max_memory_mb;   /* the most memory the volume may take; 0 = half the machine's */
    int32_t frame;           /* RGBD_FRAME_CAMERA (the scene's world, default), RGBD_FRAME_LEVEL (a
                                gravity-aligned world turned to z up; a registered scene by its photos'
                                EXIF) or RGBD_FRAME_ENU (registered scenes); docs/geo.md */
    double min_weight;       /* mesh voxels whose depths weigh at least this many full-weight views;
                                0 = every observed voxel; negative = (0.003 m / voxel)^2 (default -1) */
    int64_t triangles;       /* simplify the mesh to about this many triangles; 0 = no count (default 0) */
    double max_error;        /* simplify as far as an error of at most this many meters allows (with
                                triangles: whichever stops first); 0 = no bound (default 0) */
} rgbd_fuse_options;

/* Fills *options with the defaults above. */
void rgbd_fuse_options_default(rgbd_fuse_options *options);

/* A fused surface: vertices (positions in meters in the scene's world, RGB colors, unit
 * normals toward the observed side) and triangles (three vertex indices each,
 * counter-clockwise seen from the observed side). */
typedef struct rgbd_mesh rgbd_mesh;

/* Fuses every (every-th) frame of the scene into a TSDF volume and extracts its surface
 * with marching cubes (options NULL = defaults); *out receives a handle released with
 * rgbd_mesh_destroy. Uses all processors; the result does not depend on their number. */
int rgbd_scene_fuse(rgbd_scene *scene, const rgbd_fuse_options *options, rgbd_mesh **out);

/* Releases a mesh. Accepts NULL. */
void rgbd_mesh_destroy(rgbd_mesh *mesh);

/* The number of vertices and of triangles (either pointer may be NULL). */
int rgbd_mesh_counts(const rgbd_mesh *mesh, size_t *vertex_count, size_t *face_count);

/* Copies the mesh into caller buffers; any may be NULL to skip it. positions and normals:
 * vertex_count*3 floats; colors: vertex_count*3 bytes; faces: face_count*3 uint32.
 * vertex_capacity and face_capacity are the numbers of vertices and triangles the
 * buffers hold, at least the counts of rgbd_mesh_counts. */
int rgbd_mesh_copy(const rgbd_mesh *mesh, float *positions, uint8_t *colors, float *normals, size_t vertex_capacity,
                   uint32_t *faces, size_t face_capacity);

/* Where the mesh comes from and how it was made, as rgbd fuse writes it into its PLY
 * header: lines separated by '\n'. *length receives the text's length in bytes (without
 * the terminating NUL); buffer (NULL: only the length) receives the text and a NUL and
 * must hold length + 1 bytes (capacity). */
int rgbd_mesh_comments(const rgbd_mesh *mesh, char *buffer, size_t capacity, size_t *length);

/* Options of rgbd_mesh_write. */
typedef struct rgbd_mesh_write_options {
    int32_t texture_size;    /* a .glb, .obj or .html of a scene with color is textured from its frames
                                in atlases of this many pixels a side, 64 to 16384 (default 4096);
                                0 = vertex colors */
    int32_t ascii;           /* .ply: ASCII instead of binary little-endian (default 0) */
    int64_t max_memory_mb;   /* the most memory texturing's atlases may take; 0 = half the machine's */
} rgbd_mesh_write_options;

/* Fills *options with the defaults above. */
void rgbd_mesh_write_options_default(rgbd_mesh_write_options *options);

/* Writes a fused mesh to path as rgbd fuse writes it (options NULL = defaults), the format
 * by the extension: .ply (vertex colors and the comments of rgbd_mesh_comments, in the
 * scene's world), .glb (glTF 2.0 binary), .obj (with NAME.mtl and NAME.jpg atlas images
 * beside it when textured) or .html (a self-contained web page showing that glTF; needs
 * three.js, docs/fuse.md), the last three in glTF's axes (+Y up, the mapping in the file).
 * Textured from the frames of the scene the mesh was fused from, with its poses then, the
 * mesh first simplified within one voxel when the fusion was not simplified. An .obj never
 * replaces a NAME.mtl or image beside it that rgbd did not write. Atomic: the files appear
 * together when complete. *textured (NULL: not wanted) receives the textured fraction of
 * the surface's area, 0 to 1, or -1 for vertex colors. */
int rgbd_mesh_write(const rgbd_mesh *mesh, const char *path, const rgbd_mesh_write_options *options,
                    double *textured);

/* A fused mesh textured from its scene's frames: vertices split where charts meet (each with
 * its position, normal and texture coordinate), triangles with the atlas they take their
 * color from, and the atlas images (RGB, square, all of one side). */
typedef struct rgbd_textured_mesh rgbd_textured_mesh;

/* Textures a fused mesh from the frames of the scene it was fused from, as rgbd_mesh_write
 * does for a .glb (the mesh first simplified within one voxel when the fusion was not
 * simplified): options' texture_size (64 to 16384) and max_memory_mb, ascii ignored
 * (options NULL = defaults). *out receives a handle released with
 * rgbd_textured_mesh_destroy. Status RGBD_ERROR_INVALID_ARGUMENT for a scene without color
 * or a texture_size of 0. */
int rgbd_mesh_texture(const rgbd_mesh *mesh, const rgbd_mesh_write_options *options, rgbd_textured_mesh **out);

/* Releases a textured mesh. Accepts NULL. */
void rgbd_textured_mesh_destroy(rgbd_textured_mesh *mesh);

/* The numbers of vertices, triangles and atlases, the atlases' side in pixels and the
 * textured fraction of the surface's area, 0 to 1 (any pointer may be NULL). */
int rgbd_textured_mesh_counts(const rgbd_textured_mesh *mesh, size_t *vertex_count, size_t *face_count,
                              size_t *atlas_count, size_t *atlas_side, double *coverage);

/* Copies the textured mesh into caller buffers; any may be NULL to skip it. positions
 * (meters, the scene's world as the fused mesh) and normals: vertex_count*3 floats; uvs:
 * vertex_count*2 floats, glTF's texture coordinates ((0, 0) the atlas's top-left corner,
 * (1, 1) its bottom-right one); faces: face_count*3 uint32; face_atlas: face_count int32,
 * the atlas of each triangle. vertex_capacity and face_capacity as in rgbd_mesh_copy. */
int rgbd_textured_mesh_copy(const rgbd_textured_mesh *mesh, float *positions, float *normals, float *uvs,
                            size_t vertex_capacity, uint32_t *faces, int32_t *face_atlas, size_t face_capacity);

/* Copies atlas number index (0-based): side*side*3 bytes of RGB, rows top first, into
 * pixels of capacity bytes. */
int rgbd_textured_mesh_atlas(const rgbd_textured_mesh *mesh, size_t index, uint8_t *pixels, size_t capacity);

/* Writes a triangle mesh as PLY, as rgbd fuse does: positions and normals vertex_count*3
 * floats, colors vertex_count*3 bytes, faces face_count*3 uint32 vertex indices (each
 * below vertex_count, counter-clockwise seen from the outside), comments the header's
 * comment lines separated by '\n' (NULL: none); binary little-endian, or ASCII when ascii
 * is nonzero. Atomic, and creates missing parent directories, like rgbd_write_ply. */
int rgbd_write_mesh_ply(const char *path, const float *positions, const uint8_t *colors, const float *normals,
                        size_t vertex_count, const uint32_t *faces, size_t face_count, const char *comments,
                        int32_t ascii);

/* ---- AprilTags (docs/markers.md) ----------------------------------------------------- */

/* Tag families. */
#define RGBD_TAG_FAMILY_36H11 0
#define RGBD_TAG_FAMILY_STANDARD41H12 1

/* One clean tag found in a capture's rectified color, with depth under it. corners: the
 * black square's four corners (x, y) in rectified color pixels (integer coordinates are
 * pixel centres), in the tag's order (tag coordinates (-s/2,+s/2), (+s/2,+s/2),
 * (+s/2,-s/2), (-s/2,-s/2); tag frame x right, y down, z into the tag). tag_to_camera: the
 * pose from corners and depth combined, 4x4 row-major, OpenCV camera axes, meters.
 * size: the black square's edge used (meters; measured in the depth when none was given).
 * corner_rms: pixels; depth_rms: meters; depth_scale: the tag's edge in the depth over size. */
typedef struct rgbd_tag {
    int32_t id;
    int32_t duplicate_id;
    double corners[8];
    double center[2];
    double decision_margin;
    double size;
    double tag_to_camera[16];
    double corner_rms;
    double depth_rms;
    double depth_scale;
} rgbd_tag;

/* Finds the tags of `family` in the capture (rectifying it if not yet done). size: the black
 * square's edge in meters, or 0 to measure it in the depth. Writes up to `capacity` tags
 * (sorted by ID) to `tags` (may be NULL when capacity is 0); *count receives how many were
 * found, so a call with capacity 0 asks for the count. */
int rgbd_capture_tags(const rgbd_capture *capture, int32_t family, double size, rgbd_tag *tags, size_t capacity,
                      size_t *count);

/* `rgbd register`: places the `count` captures (capture JSON or Portrait photo paths) in
 * one world by the tags they share and writes output_dir/scene.json (a scene
 * rgbd_scene_open reads) and output_dir/report.json. origin_tag: the world's tag, or -1 for
 * the lowest ID seen by two captures. metric_from_tags: nonzero to rescale each capture's
 * depth by its tags first (needs size > 0). Succeeds when any capture was registered;
 * *registered (may be NULL) receives how many (the others are in the report). */
int rgbd_register(const char *const *paths, size_t count, int32_t family, double size, int32_t origin_tag,
                  int32_t metric_from_tags, const char *output_dir, size_t *registered);

#ifdef __cplusplus
}
#endif
#endif /* RGBD_H */
