#!/usr/bin/env bash
# Benchmarks `rgbd info` on the 12 MP capture (issue 10: "under 0.1 s for the 12 MP
# capture", no rectification). There is no baseline program that inspects a capture; in
# the same run, interleaved, it times Python's own `json.load` of the same JSON (the least
# any inspecting script does: read the calibration and the depth numbers) and `rgbd
# rectify` of the capture, as references for the machine's state. Whole processes, wall
# time; medians of RUNS runs after a warm-up. Prints a Markdown table.
#
#   ./Scripts/bench-info.sh
#   RUNS=15 ./Scripts/bench-info.sh
#
# Environment: RUNS (default 11), RGBD_BENCH_OUT (capture cache and outputs, default
# bench-out), RGBD_SCRATCH (SwiftPM build path, default .build-bench), PYTHON (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-11}
out=${RGBD_BENCH_OUT:-bench-out}
python=${PYTHON:-python3}
./Scripts/bootstrap.sh
# shellcheck source=Scripts/bench-wall.sh
source Scripts/bench-wall.sh
build_rgbd_and_big_capture
timed() { local label=$1; shift; wall_timed "$out/info-times.$label" "$@"; }
rm -f "$out"/info-times.*
info() { timed "$1" "$bin/rgbd" info "$capture"; }
info_json() { timed "$1" "$bin/rgbd" info "$capture" --json; }
json_load() { timed "$1" "$python" -c 'import json, sys; json.load(open(sys.argv[1]))' "$capture"; }
rectify() { timed "$1" "$bin/rgbd" rectify "$capture" -o "$out/info-rectified" -q; }

echo "== rgbd info, rgbd info --json, python json.load, rgbd rectify: $runs runs each, interleaved" >&2
info warmup; info_json warmup; json_load warmup; rectify warmup
for _ in $(seq 1 "$runs"); do
  info info
  info_json json
  json_load python
  rectify rectify
done
verdict() { awk -v t="$1" 'BEGIN { print (t < 0.1) ? "**PASS**" : "**FAIL**" }'; }
i=$(median "$out/info-times.info")
j=$(median "$out/info-times.json")
echo
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')."
echo
echo "| whole process, 4032×3024 JPEG + 768×576 depth JSON, median of $runs (range) | wall | target | result |"
echo "|---|---|---|---|"
echo "| \`rgbd info\` | $i s ($(range "$out/info-times.info") s) | < 0.1 s | $(verdict "$i") |"
echo "| \`rgbd info --json\` | $j s ($(range "$out/info-times.json") s) | < 0.1 s | $(verdict "$j") |"
echo "| Python \`json.load\` of the same JSON (reference) | $(median "$out/info-times.python") s ($(range "$out/info-times.python") s) | | |"
echo "| \`rgbd rectify\` (reference) | $(median "$out/info-times.rectify") s ($(range "$out/info-times.rectify") s) | | |"
