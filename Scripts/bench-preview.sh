#!/usr/bin/env bash
# Benchmarks `rgbd preview` on the 12 MP capture (issue 12, "Done means": under 0.5 s).
# There is no baseline program for a preview; `rgbd rectify` of the same capture is timed
# in the same run, interleaved, as a reference for the machine's state. Whole processes,
# wall time; medians of RUNS runs after a warm-up. Prints a Markdown table.
#
#   ./Scripts/bench-preview.sh
#   RUNS=11 WIDTH=1200 ./Scripts/bench-preview.sh
#
# Environment: RUNS (default 7), WIDTH (sheet width, default 1600), RGBD_BENCH_OUT (capture
# cache and outputs, default bench-out), RGBD_SCRATCH (SwiftPM build path, default .build-bench).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-7}
width=${WIDTH:-1600}
out=${RGBD_BENCH_OUT:-bench-out}
# shellcheck source=Scripts/bench-wall.sh
source Scripts/bench-wall.sh
build_rgbd_and_big_capture
timed() { local label=$1; shift; wall_timed "$out/preview-times.$label" "$@"; }
rm -f "$out"/preview-times.*
preview() { timed "$1" "$bin/rgbd" preview "$capture" -o "$out/preview" --width "$width" -q; }
rectify() { timed "$1" "$bin/rgbd" rectify "$capture" -o "$out/rectified" -q; }

echo "== rgbd preview (--width $width) and rgbd rectify, $runs runs each, interleaved" >&2
preview warmup
rectify warmup
for _ in $(seq 1 "$runs"); do
  preview preview
  rectify rectify
done
p=$(median "$out/preview-times.preview")
r=$(median "$out/preview-times.rectify")
verdict=$(awk -v p="$p" 'BEGIN { print (p < 0.5) ? "**PASS**" : "**FAIL**" }')
echo "== stages of one rgbd preview --timings" >&2
"$bin/rgbd" preview "$capture" -o "$out/preview" --width "$width" --timings -q 2>&1 | sed 's/^/    /' >&2
echo
echo "| whole process, 4032×3024 JPEG + 768×576 depth, median of $runs (range) | wall | target | result |"
echo "|---|---|---|---|"
echo "| \`rgbd preview --width $width\` | $p s ($(range "$out/preview-times.preview") s) | < 0.5 s | $verdict |"
echo "| \`rgbd rectify\` (reference, same run) | $r s ($(range "$out/preview-times.rectify") s) | | |"
