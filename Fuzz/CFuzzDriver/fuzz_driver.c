// See fuzz_driver.h. LLVMFuzzerRunDriver is declared weak: in a normal build (no
// libFuzzer linked) its address is NULL and the replay driver runs instead.
#include "fuzz_driver.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

enum { scratch_capacity = 8 };
static char scratch_directory[64];
static char *scratch_files[scratch_capacity];
static int scratch_count;

static void remove_scratch(void) {
    for (int i = 0; i < scratch_count; i++) unlink(scratch_files[i]);
    if (scratch_directory[0]) rmdir(scratch_directory);
}

const char *rgbd_fuzz_scratch_file(const char *name) {
    for (int i = 0; i < scratch_count; i++) {
        const char *last = strrchr(scratch_files[i], '/');
        if (last && strcmp(last + 1, name) == 0) return scratch_files[i];
    }
    if (scratch_count == scratch_capacity) return NULL;
    if (!scratch_directory[0]) {
        snprintf(scratch_directory, sizeof scratch_directory, "/tmp/rgbd-fuzz-XXXXXX");
        if (mkdtemp(scratch_directory) == NULL) {
            scratch_directory[0] = 0;
            return NULL;
        }
        atexit(remove_scratch);
    }
    size_t length = strlen(scratch_directory) + strlen(name) + 2;
    char *path = malloc(length);
    if (path == NULL) return NULL;
    snprintf(path, length, "%s/%s", scratch_directory, name);
    scratch_files[scratch_count++] = path;
    return path;
}

int rgbd_fuzz_write_file(const char *path, const uint8_t *data, size_t size) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)n;
    }
    return close(fd) == 0 ? 0 : -1;
}
