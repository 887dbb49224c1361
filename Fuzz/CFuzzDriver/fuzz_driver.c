// See fuzz_driver.h. LLVMFuzzerRunDriver is declared weak: in a normal build (no
// libFuzzer linked) its address is NULL and the replay driver runs instead.
#include "fuzz_driver.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

extern int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *, size_t))
    __attribute__((weak));

/// Calls `callback` with the contents of the file `path`; returns 0, or 1 if it cannot be read.
static int replay_file(const char *path, rgbd_fuzz_callback callback) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    size_t capacity = 1 << 16, size = 0, n;
    uint8_t *data = malloc(capacity);
    while (data != NULL && (n = fread(data + size, 1, capacity - size, file)) > 0) {
        size += n;
        if (size == capacity) {
            uint8_t *bigger = realloc(data, capacity * 2);
            if (bigger == NULL) { free(data); data = NULL; break; }
            data = bigger;
            capacity *= 2;
        }
    }
    int failed = ferror(file) || data == NULL;
    fclose(file);
    if (!failed) callback(data, size);
    free(data);
    if (failed) fprintf(stderr, "cannot read %s\n", path);
    return failed;
}

/// Replays `path` (a file, or every regular file of a directory); counts what it ran.
static int replay(const char *path, rgbd_fuzz_callback callback, int *count) {
    struct stat info;
    if (stat(path, &info) != 0) {
        fprintf(stderr, "no such file or directory: %s\n", path);
        return 1;
    }
    if (!S_ISDIR(info.st_mode)) {
        *count += 1;
        return replay_file(path, callback);
    }
    DIR *directory = opendir(path);
    if (directory == NULL) return 1;
    int failures = 0;
    struct dirent *entry;
    while ((entry = readdir(directory)) != NULL) {
        if (entry->d_name[0] == '.') continue;
        size_t length = strlen(path) + strlen(entry->d_name) + 2;
        char *child = malloc(length);
        if (child == NULL) { failures++; break; }
        snprintf(child, length, "%s/%s", path, entry->d_name);
        if (stat(child, &info) == 0 && S_ISREG(info.st_mode)) {
            *count += 1;
            failures += replay_file(child, callback);
        }
        free(child);
    }
    closedir(directory);
    return failures;
}

int rgbd_fuzz_main(int argc, char **argv, rgbd_fuzz_callback callback) {
    if (LLVMFuzzerRunDriver != NULL) return LLVMFuzzerRunDriver(&argc, &argv, callback);
    int failures = 0, count = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') continue;  // libFuzzer options mean nothing here
        failures += replay(argv[i], callback, &count);
    }
    printf("replayed %d inputs without libFuzzer%s\n", count, failures ? " (some could not be read)" : "");
    return failures ? 1 : 0;
}
