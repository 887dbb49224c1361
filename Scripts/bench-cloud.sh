#!/usr/bin/env bash
# Benchmarks `rgbd cloud` against its baselines, all in the same run (issue 3, "Speed"):
# the generated 4032x3024 JPEG + 768x576 depth capture of bench-rectify.sh; the whole rgbd
# process against Scripts/baseline_cloud.py (wall time and peak RSS, interleaved), and
# back-projection plus PLY writing in-process (rgbd-bench --only cloud) against numpy +
# plyfile (Scripts/baseline_cloud_write.py, on the outputs of one `rgbd rectify`).
# Prints a summary (goals PASS/FAIL, per-stage medians) and writes it to OUT/summary-cloud.md.
#
#   ./Scripts/bench-cloud.sh
#   RUNS=5 ./Scripts/bench-cloud.sh
#
# Environment: RUNS (timed runs of everything, default 7), RGBD_BENCH_OUT (capture cache
# and results, default bench-out), RGBD_SCRATCH (SwiftPM build path, default .build-bench).
# Exits non-zero only if something failed to run; a missed goal shows FAIL.
set -euo pipefail
cd "$(dirname "$0")/.."

raw=${RGBD_BENCH_OUT:-bench-out}/raw-cloud
# shellcheck source=Scripts/bench-common.sh
source Scripts/bench-common.sh
rectified=$out/rectified
rgbd_run() { timed "$1" "$bin/rgbd" cloud "$capture" -o "$out/cloud.ply" --timings -q; }
py_run() { timed "$1" "$py" Scripts/baseline_cloud.py "$capture" "$image" "$out/py-cloud.ply" --stages; }

echo "== whole process: rgbd cloud vs Scripts/baseline_cloud.py, $runs runs each, interleaved" >&2
rgbd_run rgbd.warmup
py_run py.warmup
for i in $(seq 1 "$runs"); do
  rgbd_run "rgbd.$i"
  py_run "py.$i"
done

echo "== rgbd-bench --only cloud (in-process back-projection and PLY writing)" >&2
"$bin/rgbd-bench" "$capture" --runs "$runs" --only cloud >"$raw/rgbd-bench.txt" 2>"$raw/rgbd-bench.err" || {
  echo "bench-cloud: failed: rgbd-bench" >&2
  cat "$raw/rgbd-bench.err" >&2
  exit 1
}

echo "== baseline: numpy + plyfile (Scripts/baseline_cloud_write.py) on one rgbd rectify's outputs" >&2
"$bin/rgbd" rectify "$capture" -o "$rectified" -q
"$py" Scripts/baseline_cloud_write.py --depth-tiff "$rectified/bench.depth.tiff" \
  --intrinsics "$rectified/bench.intrinsics.json" --color "$rectified/bench.color.png" \
  --runs "$runs" >"$raw/baseline_cloud_write.txt"

cat /proc/loadavg >"$raw/loadavg-end.txt" 2>/dev/null || true
swift --version 2>&1 | grep -m1 -i 'swift version' >"$raw/swift-version.txt" || true
echo >&2
"$py" Scripts/bench_cloud_summary.py "$raw" --plys "$out/cloud.ply" "$out/py-cloud.ply" \
  --markdown "$out/summary-cloud.md"
echo >&2
echo "Summary written to $out/summary-cloud.md; raw outputs in $raw/" >&2
