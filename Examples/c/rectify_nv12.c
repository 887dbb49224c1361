/*
 * rectify_nv12.c: rectifies raw NV12 frames (420v/420f) with the calibration of an rgbd
 * capture, through an rgbd_rectifier created once.
 *
 *     cc -std=c99 rectify_nv12.c $(pkg-config --cflags --libs rgbd) -o rectify_nv12
 *     ./rectify_nv12 CAPTURE.json WIDTH HEIGHT IN.nv12 OUT.nv12
 *
 * IN.nv12 holds frames one after another, each the WIDTH x HEIGHT luminance plane then
 * the ((WIDTH+1)/2) x ((HEIGHT+1)/2) plane of Cb Cr pairs, rows packed (what
 * `ffmpeg -pix_fmt nv12 -f rawvideo` writes). OUT.nv12 receives the rectified frames in
 * the same layout. The frames are copied into planes with padded rows (as a
 * CVPixelBuffer's are) to show row strides; rgbd reads and writes them in place.
 */
#include <rgbd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what) {
    fprintf(stderr, "rectify_nv12: %s: %s\n", what, rgbd_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s CAPTURE.json WIDTH HEIGHT IN.nv12 OUT.nv12\n", argv[0]);
        return 2;
    }
    int32_t width = atoi(argv[2]), height = atoi(argv[3]);
    if (width <= 0 || height <= 0) {
        fprintf(stderr, "rectify_nv12: WIDTH and HEIGHT must be positive\n");
        return 2;
    }

    /* The lens from the capture's calibration. */
    rgbd_capture *capture = NULL;
    if (rgbd_capture_load(argv[1], NULL, &capture) != RGBD_OK) return fail(argv[1]);
    rgbd_lens lens;
    size_t count = 0;
    float *table = NULL;
    if (rgbd_capture_reference_size(capture, &lens.reference_width, &lens.reference_height) != RGBD_OK ||
        rgbd_capture_distortion_center(capture, &lens.center_x, &lens.center_y) != RGBD_OK ||
        rgbd_capture_lookup_table(capture, 0, NULL, 0, &count) != RGBD_OK)
        return fail(argv[1]);
    table = malloc(count * sizeof *table);
    if (table == NULL || rgbd_capture_lookup_table(capture, 0, table, count, &count) != RGBD_OK) return fail(argv[1]);
    lens.table = table;
    lens.table_count = count;
    rgbd_capture_destroy(capture);

    /* Once per camera and frame size. */
    rgbd_rectifier *rectifier = NULL;
    if (rgbd_rectifier_create(&lens, width, height, 0, RGBD_RECTIFIER_MAP_BYTES_DEFAULT, &rectifier) != RGBD_OK)
        return fail("rgbd_rectifier_create");
    free(table);
    size_t held = 0;
    int32_t cw = 0, ch = 0;
    if (rgbd_rectifier_info(rectifier, &held, &cw, &ch) != RGBD_OK) return fail("rgbd_rectifier_info");
    fprintf(stderr, "rectify_nv12: %dx%d frames, chroma %dx%d, rectifier holds %zu bytes\n", (int)width,
            (int)height, (int)cw, (int)ch, held);

    /* Planes with rows padded to 64 bytes, as a CVPixelBuffer's. */
    size_t y_row = ((size_t)width + 63) / 64 * 64, c_row = ((size_t)cw * 2 + 63) / 64 * 64;
    size_t y_size = y_row * (size_t)height, c_size = c_row * (size_t)ch;
    uint8_t *in_y = malloc(y_size), *in_c = malloc(c_size), *out_y = malloc(y_size), *out_c = malloc(c_size);
    if (!in_y || !in_c || !out_y || !out_c) {
        fprintf(stderr, "rectify_nv12: out of memory\n");
        return 1;
    }
    FILE *in = fopen(argv[4], "rb"), *out = fopen(argv[5], "wb");
    if (!in || !out) {
        perror("rectify_nv12");
        return 1;
    }

    long frames = 0;
    for (;;) {
        int complete = 1;
        for (int32_t r = 0; r < height && complete; r++) complete = fread(in_y + r * y_row, 1, (size_t)width, in) == (size_t)width;
        for (int32_t r = 0; r < ch && complete; r++) complete = fread(in_c + r * c_row, 1, (size_t)cw * 2, in) == (size_t)cw * 2;
        if (!complete) break;
        if (rgbd_rectifier_apply_nv12(rectifier, in_y, y_row, y_size, in_c, c_row, c_size, out_y, y_row, y_size, out_c,
                                      c_row, c_size) != RGBD_OK)
            return fail("rgbd_rectifier_apply_nv12");
        for (int32_t r = 0; r < height; r++) fwrite(out_y + r * y_row, 1, (size_t)width, out);
        for (int32_t r = 0; r < ch; r++) fwrite(out_c + r * c_row, 1, (size_t)cw * 2, out);
        frames++;
    }
    if (fclose(out) != 0) {
        perror("rectify_nv12");
        return 1;
    }
    fclose(in);
    rgbd_rectifier_destroy(rectifier);
    free(in_y);
    free(in_c);
    free(out_y);
    free(out_c);
    printf("rectified %ld frames\n", frames);
    return 0;
}
