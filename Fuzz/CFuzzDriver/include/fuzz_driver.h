#ifndef RGBD_FUZZ_DRIVER_H
#define RGBD_FUZZ_DRIVER_H
// The entry point of rgbd's fuzz targets (Fuzz/README.md).
#include <stddef.h>
#include <stdint.h>

/// One fuzz input; returns 0 (libFuzzer's convention; -1 keeps it out of the corpus).
typedef int (*rgbd_fuzz_callback)(const uint8_t *data, size_t size);

/// Runs `callback` under libFuzzer (`LLVMFuzzerRunDriver`, present when the program is
/// linked with `-sanitize=fuzzer`) with libFuzzer's command line; without libFuzzer,
/// replays every file named on the command line (directories: every file inside) once
/// and reports how many, so the same executable checks a corpus in a normal build.
int rgbd_fuzz_main(int argc, char **argv, rgbd_fuzz_callback callback);

/// The path of a file named `name` in a directory of this process's own
/// (/tmp/rgbd-fuzz-XXXXXX, made at the first call; it and the files named here are
/// removed at exit), for targets that hand each input to a reader as a file; the same
/// path for the same name. NULL if the directory cannot be made. Not thread-safe.
const char *rgbd_fuzz_scratch_file(const char *name);

/// Writes `size` bytes at `data` to `path` (created or truncated): 0, or -1 on a failure.
int rgbd_fuzz_write_file(const char *path, const uint8_t *data, size_t size);

#endif
