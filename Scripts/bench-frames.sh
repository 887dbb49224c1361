#!/usr/bin/env bash
# Benchmarks rectifying video frames (issue 11): rgbd.Rectifier (the C library through the
# Python package, as a Python user calls it) against cv2.remap with maps precomputed by
# OpenCV (fixed point, CV_16SC2), 1920x1440 frames, 2 threads each, in one process with
# alternating rounds (Scripts/bench_frames.py); then rgbd-bench --frames (the Swift
# kernels in-process, no ctypes) for the per-stage figures, also with RGBD_DISABLE_AVX2 (the
# Swift loops rather than the AVX2 ones of Sources/CKernels).
#
#   ./Scripts/bench-frames.sh
#   RUNS=15 ROUNDS=5 SIZE=1920x1440 ./Scripts/bench-frames.sh
#
# Goals: per-frame time <= OpenCV's for luminance, RGB, BGRA and NV12; at least 300
# luminance frames/s. Writes the summary to OUT/frames-summary.md (OUT: RGBD_BENCH_OUT,
# default bench-out). Exits non-zero only if something failed to run.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-15}
rounds=${ROUNDS:-5}
size=${SIZE:-1920x1440}
out=${RGBD_BENCH_OUT:-bench-out}

./Scripts/bootstrap.sh --python
# shellcheck source=Scripts/common.sh
source Scripts/common.sh
use_venv Scripts/requirements-bench.txt

# Its own build folder (as the other benchmarks), release, without testing enabled.
build=(swift build -c release --scratch-path "${RGBD_SCRATCH:-.build-bench}")
echo "== building the library and rgbd-bench (release)" >&2
"${build[@]}" --product RGBDKit >&2
"${build[@]}" --product rgbd-bench >&2
bin=$("${build[@]}" --show-bin-path)
lib=$bin/libRGBDKit.so
[ "$(uname -s)" = Darwin ] && lib=$bin/libRGBDKit.dylib

mkdir -p "$out"
echo "== rgbd.Rectifier vs cv2.remap, $size, $rounds alternating rounds of $runs runs" >&2
RGBD_LIBRARY=$lib "$py" Scripts/bench_frames.py --width "${size%x*}" --height "${size#*x}" \
  --runs "$runs" --rounds "$rounds" --markdown "$out/frames-summary.md"
echo >&2
echo "== rgbd-bench --frames $size (Swift, in-process)" >&2
"$bin/rgbd-bench" --frames "$size" --runs "$runs" | tee "$out/frames-rgbd-bench.txt"
# The same kernels without the AVX2 loops (Sources/CKernels), for comparison: the Swift
# loops every CPU runs.
echo "== rgbd-bench --frames $size with RGBD_DISABLE_AVX2 (the Swift loops only)" >&2
RGBD_DISABLE_AVX2=1 "$bin/rgbd-bench" --frames "$size" --runs "$runs" --only 'frame_luma$,frame_bgra$,frame_nv12$' |
  tee "$out/frames-rgbd-bench-swift.txt"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)" >&2
echo "Summary written to $out/frames-summary.md" >&2
