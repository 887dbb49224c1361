/*
 * uses_header.c — proves that rgbd.h alone is enough to use the library from C.
 *
 * Includes only rgbd.h and standard headers; C99, builds with
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -I Sources/CRGBD/include \
 *      Tests/c/uses_header.c -L DIR -lRGBDKit -Wl,-rpath,DIR -o uses_header
 *
 * Usage: uses_header CAPTURE.json [POINTS FX FY CX CY]
 *   Loads the capture (from its paths and from memory; any sizes of color image and
 *   depth map, the depth map possibly the larger), checks sizes, intrinsics,
 *   rectified depth, the pixel-aligned pair, the point cloud and the error paths. The
 *   optional values are expectations from the command line tool: the number of points of
 *   `rgbd cloud` with default options and the rectified depth intrinsics of `rgbd
 *   rectify`'s sidecar.
 * Exits 0 if every check passed, 1 otherwise (each failure is printed on stderr).
 * Run by Tests/python/test_python_package.py.
 */
#include "rgbd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d: check failed: %s (last error: \"%s\")\n", __FILE__, \
                    __LINE__, #cond, rgbd_last_error());                                  \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

/* Reads a whole file into a malloc'ed buffer; NULL on failure. */
static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    long length;
    if (f == NULL) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (length = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        data = malloc((size_t)length + 1);
        if (data != NULL && fread(data, 1, (size_t)length, f) != (size_t)length) {
            free(data);
            data = NULL;
        }
        *size = (size_t)length;
    }
    fclose(f);
    return data;
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b) + 1.0); }

/* rgbd_capture_aligned against the rectified images (rectified: the rectified depth). */
static void check_aligned(rgbd_capture *capture, int32_t cw, int32_t ch, int32_t dw, int32_t dh,
                          const rgbd_intrinsics *color, const rgbd_intrinsics *depth, const float *rectified) {
    rgbd_intrinsics grid;
    size_t i, color_bytes = (size_t)cw * (size_t)ch * 3, pixels = (size_t)dw * (size_t)dh;
    uint8_t *expected = malloc(color_bytes), *rgb = malloc(color_bytes);
    float *aligned = malloc(pixels * sizeof *aligned);

    CHECK(rgbd_capture_aligned(capture, RGBD_ALIGN_COLOR, NULL, 0, NULL, 0, &grid) == RGBD_OK);
    CHECK(grid.width == cw && grid.height == ch);
    CHECK(close_to(grid.fx, color->fx) && close_to(grid.fy, color->fy));
    CHECK(close_to(grid.cx, color->cx) && close_to(grid.cy, color->cy));
    if (expected != NULL && rgb != NULL) {
        CHECK(rgbd_capture_rectified_color(capture, expected, color_bytes) == RGBD_OK);
        CHECK(rgbd_capture_aligned(capture, RGBD_ALIGN_COLOR, rgb, color_bytes, NULL, 0, NULL) == RGBD_OK);
        CHECK(memcmp(rgb, expected, color_bytes) == 0);
        CHECK(rgbd_capture_aligned(capture, RGBD_ALIGN_COLOR, rgb, color_bytes - 1, NULL, 0, &grid) ==
              RGBD_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(rgbd_last_error(), "rgb") != NULL);
    }
    if (cw >= dw && ch >= dh) {
        CHECK(rgbd_capture_aligned(capture, RGBD_ALIGN_DEPTH, NULL, 0, NULL, 0, &grid) == RGBD_OK);
        CHECK(grid.width == dw && grid.height == dh);
        CHECK(close_to(grid.fx, depth->fx) && close_to(grid.cy, depth->cy));
        if (aligned != NULL && rgb != NULL) {
            CHECK(rgbd_capture_aligned(capture, RGBD_ALIGN_DEPTH, rgb, pixels * 3, aligned, pixels, &grid) == RGBD_OK);
            for (i = 0; i < pixels; i++) CHECK((isnan(aligned[i]) && isnan(rectified[i])) || aligned[i] == rectified[i]);
            CHECK(rgbd_capture_aligned(capture, RGBD_ALIGN_DEPTH, NULL, 0, aligned, pixels - 1, &grid) ==
                  RGBD_ERROR_INVALID_ARGUMENT);
        }
    } else {
        /* No footprint to average the color over. */
        CHECK(rgbd_capture_aligned(capture, RGBD_ALIGN_DEPTH, NULL, 0, NULL, 0, &grid) == RGBD_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(rgbd_last_error(), "larger than the image") != NULL);
    }
    CHECK(rgbd_capture_aligned(capture, RGBD_ALIGN_NONE, NULL, 0, NULL, 0, &grid) == RGBD_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(rgbd_last_error(), "align_to") != NULL);
    free(expected);
    free(rgb);
    free(aligned);
}

/* Everything a capture handle offers; the capture is the sample's. */
static void check_capture(rgbd_capture *capture, int argc, char **argv) {
    int32_t cw = 0, ch = 0, dw = 0, dh = 0, rw = 0, rh = 0;
    rgbd_intrinsics reference, color, depth;
    double center_x = 0, center_y = 0;
    size_t table_count = 0, inverse_count = 0, count = 0, written = 0, i, valid = 0, n, pixels, kept = 0;
    float *table, *captured, *rectified, *points, *normals;
    uint8_t *rgb, *colors;
    rgbd_cloud_options options;

    CHECK(rgbd_capture_color_size(capture, &cw, &ch) == RGBD_OK);
    CHECK(rgbd_capture_depth_size(capture, &dw, &dh) == RGBD_OK);
    CHECK(rgbd_capture_reference_size(capture, &rw, &rh) == RGBD_OK);
    CHECK(rgbd_capture_color_size(capture, NULL, NULL) == RGBD_OK); /* outputs may be NULL */
    CHECK(cw > 0 && ch > 0 && dw > 0 && dh > 0 && rw > 0 && rh > 0);
    /* The color image is usually larger than the depth map, but need not be (then each
     * point takes the nearest color pixel): every size pair must work. */
    if (cw <= 0 || ch <= 0 || dw <= 0 || dh <= 0) return;

    CHECK(rgbd_capture_intrinsics(capture, RGBD_INTRINSICS_REFERENCE, &reference) == RGBD_OK);
    CHECK(rgbd_capture_intrinsics(capture, RGBD_INTRINSICS_COLOR, &color) == RGBD_OK);
    CHECK(rgbd_capture_intrinsics(capture, RGBD_INTRINSICS_DEPTH, &depth) == RGBD_OK);
    CHECK(reference.width == rw && reference.height == rh);
    CHECK(color.width == cw && color.height == ch);
    CHECK(depth.width == dw && depth.height == dh);
    /* Scaled separately in x and y (docs/lens-model.md). */
    CHECK(close_to(color.fx, reference.fx * cw / rw) && close_to(color.cx, reference.cx * cw / rw));
    CHECK(close_to(depth.fy, reference.fy * dh / rh) && close_to(depth.cy, reference.cy * dh / rh));
    if (argc >= 7) {
        CHECK(close_to(depth.fx, atof(argv[3])) && close_to(depth.fy, atof(argv[4])));
        CHECK(close_to(depth.cx, atof(argv[5])) && close_to(depth.cy, atof(argv[6])));
    }

    CHECK(rgbd_capture_distortion_center(capture, &center_x, &center_y) == RGBD_OK);
    CHECK(center_x > 0 && center_x < rw && center_y > 0 && center_y < rh);
    CHECK(rgbd_capture_lookup_table(capture, 0, NULL, 0, &table_count) == RGBD_OK);
    CHECK(rgbd_capture_lookup_table(capture, 1, NULL, 0, &inverse_count) == RGBD_OK);
    CHECK(table_count >= 2);
    table = calloc(table_count + 1, sizeof *table);
    if (table != NULL && table_count >= 2) {
        CHECK(rgbd_capture_lookup_table(capture, 0, table, table_count, &n) == RGBD_OK && n == table_count);
        CHECK(table[0] == 0.0f); /* radius 0: no magnification */
        /* A buffer one entry too small is refused. */
        CHECK(rgbd_capture_lookup_table(capture, 0, table, table_count - 1, &n) == RGBD_ERROR_INVALID_ARGUMENT);
        CHECK(strlen(rgbd_last_error()) > 0);
    }

    pixels = (size_t)dw * (size_t)dh;
    captured = malloc(pixels * sizeof *captured);
    rectified = malloc(pixels * sizeof *rectified);
    rgb = malloc((size_t)cw * (size_t)ch * 3);
    CHECK(captured != NULL && rectified != NULL && rgb != NULL);
    if (captured != NULL && rectified != NULL && rgb != NULL) {
        CHECK(rgbd_capture_depth(capture, captured, pixels) == RGBD_OK);
        CHECK(rgbd_capture_rectified_depth(capture, rectified, pixels) == RGBD_OK);
        CHECK(rgbd_capture_rectified_depth(capture, rectified, pixels - 1) == RGBD_ERROR_INVALID_ARGUMENT);
        CHECK(rgbd_capture_rectified_color(capture, rgb, (size_t)cw * (size_t)ch * 3) == RGBD_OK);
        CHECK(rgbd_capture_color(capture, rgb, (size_t)cw * (size_t)ch * 3) == RGBD_OK);
        for (i = 0; i < pixels; i++) {
            /* NaN = no depth; everything else is a positive finite depth in meters. */
            if (!isnan(rectified[i])) {
                CHECK(isfinite(rectified[i]) && rectified[i] > 0.0f);
                valid++;
            }
        }
        CHECK(valid > pixels / 2);
        CHECK(valid < pixels); /* the sample has holes */
    }

    /* The pixel-aligned pair: at the photo's size its color is the rectified color; at the
     * depth map's size (when the photo is not the smaller) its depth is the rectified depth. */
    if (rectified != NULL) check_aligned(capture, cw, ch, dw, dh, &color, &depth, rectified);

    /* Point clouds. */
    rgbd_cloud_options_default(&options);
    CHECK(options.min_depth == 0.0f && isinf(options.max_depth) && options.max_depth > 0);
    CHECK(options.stride == 1 && options.keep_edges == 0 && options.normals == 0);
    CHECK(options.axes == RGBD_AXES_OPENCV && fabsf(options.edge_threshold - 0.05f) < 1e-7f);
    CHECK(rgbd_capture_point_cloud_count(capture, NULL, &count) == RGBD_OK);
    CHECK(count > 0 && count <= valid);
    if (argc >= 3) CHECK(count == (size_t)strtoull(argv[2], NULL, 10));
    options.keep_edges = 1;
    CHECK(rgbd_capture_point_cloud_count(capture, &options, &kept) == RGBD_OK);
    CHECK(kept == valid); /* with edges kept, every valid depth pixel is a point */
    options.keep_edges = 0;
    options.normals = 1;
    points = malloc(count * 3 * sizeof *points);
    normals = malloc(count * 3 * sizeof *normals);
    colors = malloc(count * 3);
    if (points != NULL && normals != NULL && colors != NULL && count > 0) {
        CHECK(rgbd_capture_point_cloud(capture, &options, points, colors, normals, count, &written) == RGBD_OK);
        CHECK(written == count);
        for (i = 0; i < written * 3; i++) CHECK(isfinite(points[i]) && isfinite(normals[i]));
        for (i = 0; i < written; i++) {
            CHECK(points[3 * i + 2] > 0.0f);                 /* in front of the camera */
            CHECK(points[3 * i] * normals[3 * i] + points[3 * i + 1] * normals[3 * i + 1] +
                      points[3 * i + 2] * normals[3 * i + 2] <= 0.0f); /* normals face the camera */
        }
        CHECK(rgbd_capture_point_cloud(capture, &options, points, colors, normals, count - 1, &written) ==
              RGBD_ERROR_INVALID_ARGUMENT);
        options.stride = 0;
        CHECK(rgbd_capture_point_cloud_count(capture, &options, &n) == RGBD_ERROR_INVALID_ARGUMENT);
        CHECK(strlen(rgbd_last_error()) > 0);
    }

    /* Rectifying a frame with the capture's own calibration gives the capture's result. */
    if (table != NULL && rgb != NULL && rectified != NULL && captured != NULL && table_count >= 2) {
        rgbd_lens lens;
        float *again = malloc(pixels * sizeof *again);
        lens.reference_width = rw;
        lens.reference_height = rh;
        lens.center_x = center_x;
        lens.center_y = center_y;
        lens.table = table;
        lens.table_count = table_count;
        if (again != NULL) {
            CHECK(rgbd_rectify_f32(&lens, captured, dw, dh, 0.0f, again) == RGBD_OK);
            for (i = 0; i < pixels; i++) CHECK((isnan(again[i]) && isnan(rectified[i])) || again[i] == rectified[i]);
            CHECK(rgbd_rectify_f32(&lens, captured, dw, dh, 0.0f, (float *)captured) == RGBD_ERROR_INVALID_ARGUMENT);
            free(again);
        }
        CHECK(rgbd_rectify_u8(&lens, rgb, cw, ch, 2, rgb + 1) == RGBD_ERROR_INVALID_ARGUMENT);
        lens.table_count = 1;
        CHECK(rgbd_rectify_u8(&lens, rgb, cw, ch, 3, rgb) == RGBD_ERROR_INVALID_ARGUMENT);
        CHECK(rgbd_rectify_u8(NULL, rgb, cw, ch, 3, rgb) == RGBD_ERROR_INVALID_ARGUMENT);
    }

    free(table);
    free(captured);
    free(rectified);
    free(rgb);
    free(points);
    free(normals);
    free(colors);
}

/* Error paths: every function refuses NULL with a status and a message. */
static void check_errors(const char *json_path) {
    rgbd_capture *capture = NULL;
    int32_t w = 0, h = 0;
    size_t count = 0;
    rgbd_intrinsics k;
    float depth[4];
    const unsigned char garbage[] = "{\"calibration_data\": ";

    CHECK(rgbd_capture_color_size(NULL, &w, &h) != RGBD_OK);
    CHECK(strlen(rgbd_last_error()) > 0);
    CHECK(rgbd_capture_intrinsics(NULL, RGBD_INTRINSICS_COLOR, &k) == RGBD_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(rgbd_last_error(), "NULL") != NULL);
    CHECK(rgbd_capture_rectified_depth(NULL, depth, 4) == RGBD_ERROR_INVALID_ARGUMENT);
    CHECK(rgbd_capture_point_cloud_count(NULL, NULL, &count) == RGBD_ERROR_INVALID_ARGUMENT);
    CHECK(rgbd_capture_aligned(NULL, RGBD_ALIGN_DEPTH, NULL, 0, NULL, 0, &k) == RGBD_ERROR_INVALID_ARGUMENT);
    CHECK(rgbd_capture_load(NULL, NULL, &capture) == RGBD_ERROR_INVALID_ARGUMENT && capture == NULL);
    CHECK(rgbd_capture_load(json_path, NULL, NULL) == RGBD_ERROR_INVALID_ARGUMENT);
    CHECK(rgbd_capture_load("/nonexistent/rgbd/capture.json", NULL, &capture) == RGBD_ERROR_IO);
    CHECK(capture == NULL);
    CHECK(strstr(rgbd_last_error(), "/nonexistent/rgbd/capture.json") != NULL);
    CHECK(rgbd_capture_load_memory(garbage, sizeof garbage - 1, garbage, sizeof garbage - 1, "garbage", &capture) !=
          RGBD_OK);
    CHECK(capture == NULL);
    CHECK(strlen(rgbd_last_error()) > 0);
    CHECK(rgbd_write_ply(NULL, NULL, NULL, NULL, 0, 0) == RGBD_ERROR_INVALID_ARGUMENT);
    /* A size that no buffer has (once a trap: a negative count once converted). */
    CHECK(rgbd_capture_load_memory(garbage, (size_t)-1, garbage, sizeof garbage - 1, "huge", &capture) ==
          RGBD_ERROR_INVALID_ARGUMENT);
    CHECK(capture == NULL && strstr(rgbd_last_error(), "json_size") != NULL);
    CHECK(rgbd_capture_load_memory(garbage, sizeof garbage - 1, garbage, (size_t)1 << 63, "huge", &capture) ==
          RGBD_ERROR_INVALID_ARGUMENT);
    rgbd_capture_destroy(NULL); /* accepted */
}

int main(int argc, char **argv) {
    rgbd_capture *capture = NULL, *from_memory = NULL;
    unsigned char *json = NULL, *jpeg = NULL;
    size_t json_size = 0, jpeg_size = 0;
    char jpeg_path[4096];
    size_t length;

    if (argc < 2) {
        fprintf(stderr, "usage: %s CAPTURE.json [POINTS FX FY CX CY]\n", argv[0]);
        return 2;
    }
    CHECK(rgbd_version() != NULL && strlen(rgbd_version()) > 0);
    CHECK(strcmp(rgbd_last_error(), "") == 0); /* nothing failed yet on this thread */

    CHECK(rgbd_capture_load(argv[1], NULL, &capture) == RGBD_OK);
    CHECK(capture != NULL);
    if (capture != NULL) check_capture(capture, argc, argv);
    rgbd_capture_destroy(capture);

    /* The same capture from memory. */
    length = strlen(argv[1]);
    if (length > 5 && length < sizeof jpeg_path && strcmp(argv[1] + length - 5, ".json") == 0) {
        memcpy(jpeg_path, argv[1], length - 5);
        strcpy(jpeg_path + length - 5, ".jpg");
        json = read_file(argv[1], &json_size);
        jpeg = read_file(jpeg_path, &jpeg_size);
        CHECK(json != NULL && jpeg != NULL);
        if (json != NULL && jpeg != NULL) {
            CHECK(rgbd_capture_load_memory(json, json_size, jpeg, jpeg_size, "sample", &from_memory) == RGBD_OK);
            if (from_memory != NULL) check_capture(from_memory, argc, argv);
            /* Cut short (here in the depth map), as empty: not valid JSON. */
            CHECK(rgbd_capture_load_memory(json, json_size / 2, jpeg, jpeg_size, "half", &capture) ==
                  RGBD_ERROR_INVALID_JSON);
            CHECK(strstr(rgbd_last_error(), "half") != NULL);
            CHECK(rgbd_capture_load_memory(json, 0, jpeg, jpeg_size, "empty", &capture) == RGBD_ERROR_INVALID_JSON);
            rgbd_capture_destroy(from_memory);
        }
        free(json);
        free(jpeg);
    }

    check_errors(argv[1]);

    if (failures) {
        fprintf(stderr, "uses_header: %d check(s) failed\n", failures);
        return 1;
    }
    printf("uses_header: all checks passed (rgbd %s)\n", rgbd_version());
    return 0;
}
