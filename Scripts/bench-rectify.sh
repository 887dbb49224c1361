#!/usr/bin/env bash
# Benchmarks `rgbd rectify` against its baselines, all in the same run (issue 2, "Speed"):
# a generated 4032x3024 JPEG + 768x576 depth capture; the whole rgbd process against
# Scripts/baseline_rectify.py (wall time and peak RSS, interleaved), cv2.remap and
# orjson.loads (Scripts/baseline_remap.py) against rgbd-bench's in-process stages.
# Prints a summary (goals PASS/FAIL, per-stage medians) and writes it to OUT/summary.md.
#
#   ./Scripts/bench-rectify.sh
#   RUNS=5 ./Scripts/bench-rectify.sh
#
# Environment: RUNS (timed runs of everything, default 7), ROUNDS (alternating rounds of
# the color-rectification comparison, default 5), RGBD_BENCH_OUT (capture cache
# and results, default bench-out), RGBD_SCRATCH (SwiftPM build path, default .build-bench).
# Exits non-zero only if something failed to run; a missed goal shows FAIL.
set -euo pipefail
cd "$(dirname "$0")/.."

raw=${RGBD_BENCH_OUT:-bench-out}/raw
rounds=${ROUNDS:-5}
# shellcheck source=Scripts/bench-common.sh
source Scripts/bench-common.sh
rgbd_run() { timed "$1" "$bin/rgbd" rectify "$capture" -o "$out/rgbd" --timings -q; }
py_run() { timed "$1" "$py" Scripts/baseline_rectify.py "$capture" "$image" "$out/py" --stages; }

echo "== whole process: rgbd rectify vs Scripts/baseline_rectify.py, $runs runs each, interleaved" >&2
rgbd_run rgbd.warmup
py_run py.warmup
for i in $(seq 1 "$runs"); do
  rgbd_run "rgbd.$i"
  py_run "py.$i"
done

echo "== baselines: cv2.remap and orjson.loads (Scripts/baseline_remap.py)" >&2
"$py" Scripts/baseline_remap.py --width 4032 --height 3024 --runs "$runs" --json "$capture" >"$raw/baseline_remap.txt"

echo "== rgbd-bench (in-process stages)" >&2
"$bin/rgbd-bench" "$capture" --runs "$runs" --only parse,decode,rectify,map,encode,write >"$raw/rgbd-bench.txt"

# Goal 2 is a ratio of two in-process figures; this machine's speed drifts within a
# minute, so they are measured in alternating rounds and the runs of all rounds pooled.
echo "== color rectification vs cv2.remap, $rounds alternating rounds of $runs runs" >&2
for i in $(seq 1 "$rounds"); do
  "$py" Scripts/baseline_remap.py --width 4032 --height 3024 --runs "$runs" >"$raw/remap.round$i.txt"
  "$bin/rgbd-bench" "$capture" --runs "$runs" --only 'rectify_color$,rectify_color_into$' >"$raw/color.round$i.txt"
done

cat /proc/loadavg >"$raw/loadavg-end.txt" 2>/dev/null || true
swift --version 2>&1 | grep -m1 -i 'swift version' >"$raw/swift-version.txt" || true
echo >&2
"$py" Scripts/bench_summary.py "$raw" --markdown "$out/summary.md"
echo >&2
echo "Summary written to $out/summary.md; raw outputs in $raw/" >&2
