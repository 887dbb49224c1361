/*
 * threads.c — several threads on one capture handle (rgbd.h: "handles are opaque and
 * thread-safe") give the single-threaded results, and each thread's rgbd_last_error()
 * is its own. Run by Tests/python/test_python_package.py, and by Scripts/sanitize.sh
 * under ThreadSanitizer (built with -fsanitize=thread against a library built with
 * -sanitize=thread).
 *
 *   cc -std=c99 -pthread -I Sources/CRGBD/include Tests/c/threads.c -L DIR -lRGBDKit \
 *      -Wl,-rpath,DIR -lm -o threads && ./threads CAPTURE.json
 *
 * Exits 0 if every check passed, 1 otherwise (each failure is printed on stderr).
 */
#define _POSIX_C_SOURCE 200809L
#include "rgbd.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 4, ROUNDS = 3 };

static pthread_mutex_t report = PTHREAD_MUTEX_INITIALIZER;
static int failures = 0;

#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            pthread_mutex_lock(&report);                                                    \
            fprintf(stderr, "%s:%d: check failed: %s (last error: \"%s\")\n", __FILE__,   \
                    __LINE__, #cond, rgbd_last_error());                                    \
            failures++;                                                                     \
            pthread_mutex_unlock(&report);                                                  \
        }                                                                                   \
    } while (0)

/* What one set of cloud options gives, computed on its own handle. */
typedef struct {
    rgbd_cloud_options options;
    size_t count;
    float *points;
    uint8_t *colors;
} cloud;

static size_t color_size, depth_count;
static float *reference_depth;
static uint8_t *reference_color;
static cloud clouds[2];
static rgbd_capture *shared;

static int same_floats(const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i])))) return 0;
    return 1;
}

static void compute_cloud(rgbd_capture *capture, cloud *c) {
    size_t written = 0;
    CHECK(rgbd_capture_point_cloud_count(capture, &c->options, &c->count) == RGBD_OK);
    c->points = malloc((c->count + 1) * 3 * sizeof *c->points);
    c->colors = malloc((c->count + 1) * 3);
    CHECK(c->points != NULL && c->colors != NULL);
    if (c->points == NULL || c->colors == NULL) return;
    CHECK(rgbd_capture_point_cloud(capture, &c->options, c->points, c->colors, NULL, c->count, &written) == RGBD_OK);
    CHECK(written == c->count);
}

static void *work(void *arg) {
    int index = (int)(size_t)arg;
    float *depth = malloc(depth_count * sizeof *depth);
    uint8_t *color = malloc(color_size);
    char expected[64];
    CHECK(depth != NULL && color != NULL);
    for (int round = 0; round < ROUNDS && depth != NULL && color != NULL; round++) {
        /* Alternate the options, so the handle's cloud cache changes under the threads. */
        cloud *want = &clouds[(index + round) % 2], got = {want->options, 0, NULL, NULL};
        compute_cloud(shared, &got);
        CHECK(got.count == want->count);
        if (got.points != NULL && want->points != NULL && got.count == want->count) {
            CHECK(same_floats(got.points, want->points, got.count * 3));
            CHECK(memcmp(got.colors, want->colors, got.count * 3) == 0);
        }
        free(got.points);
        free(got.colors);
        CHECK(rgbd_capture_rectified_depth(shared, depth, depth_count) == RGBD_OK);
        CHECK(same_floats(depth, reference_depth, depth_count));
        CHECK(rgbd_capture_rectified_color(shared, color, color_size) == RGBD_OK);
        CHECK(memcmp(color, reference_color, color_size) == 0);

        /* Each thread's last error is its own. */
        snprintf(expected, sizeof expected, "/nonexistent/thread-%d.json", index);
        rgbd_capture *none = NULL;
        CHECK(rgbd_capture_load(expected, NULL, &none) == RGBD_ERROR_IO && none == NULL);
        CHECK(strstr(rgbd_last_error(), expected) != NULL);
    }
    free(depth);
    free(color);
    return NULL;
}

int main(int argc, char **argv) {
    rgbd_capture *single = NULL;
    int32_t cw = 0, ch = 0, dw = 0, dh = 0;
    pthread_t threads[THREADS];

    if (argc < 2) {
        fprintf(stderr, "usage: %s CAPTURE.json\n", argv[0]);
        return 2;
    }
    /* The single-threaded results, on a handle of their own. */
    CHECK(rgbd_capture_load(argv[1], NULL, &single) == RGBD_OK);
    CHECK(rgbd_capture_load(argv[1], NULL, &shared) == RGBD_OK);
    if (single == NULL || shared == NULL) return 1;
    CHECK(rgbd_capture_color_size(single, &cw, &ch) == RGBD_OK);
    CHECK(rgbd_capture_depth_size(single, &dw, &dh) == RGBD_OK);
    color_size = (size_t)cw * (size_t)ch * 3;
    depth_count = (size_t)dw * (size_t)dh;
    reference_depth = malloc(depth_count * sizeof *reference_depth);
    reference_color = malloc(color_size);
    if (reference_depth == NULL || reference_color == NULL) return 1;
    CHECK(rgbd_capture_rectified_depth(single, reference_depth, depth_count) == RGBD_OK);
    CHECK(rgbd_capture_rectified_color(single, reference_color, color_size) == RGBD_OK);
    for (int i = 0; i < 2; i++) {
        rgbd_cloud_options_default(&clouds[i].options);
        clouds[i].options.keep_edges = i;
        clouds[i].options.axes = i ? RGBD_AXES_OPENGL : RGBD_AXES_OPENCV;
        compute_cloud(single, &clouds[i]);
    }
    CHECK(clouds[0].count > 0 && clouds[0].count < clouds[1].count);

    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&threads[i], NULL, work, (void *)(size_t)i) == 0);
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);

    rgbd_capture_destroy(single);
    rgbd_capture_destroy(shared);
    for (int i = 0; i < 2; i++) {
        free(clouds[i].points);
        free(clouds[i].colors);
    }
    free(reference_depth);
    free(reference_color);
    if (failures) {
        fprintf(stderr, "threads: %d check(s) failed\n", failures);
        return 1;
    }
    printf("threads: all checks passed (%d threads, %d rounds)\n", THREADS, ROUNDS);
    return 0;
}
