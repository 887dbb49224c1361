#ifndef RGBD_CFFMPEG_HEADERS_SHIM_H
#define RGBD_CFFMPEG_HEADERS_SHIM_H
// Empty on purpose: this system-library target only carries FFmpeg's include path (from
// pkg-config, on macOS) to the CFFmpeg target, whose header includes FFmpeg's headers.
// Including them here as well would declare FFmpeg's types in two Clang modules.
#endif
