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

#endif
