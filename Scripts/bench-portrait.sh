#!/usr/bin/env bash
# Benchmarks a 12 MP Portrait HEIC (issue 14): `rgbd rectify IMG.heic` (depth image and
# calibration from the photo) against the same photo as a JSON + HEIC capture
# (`rgbd rectify portrait-json.json --image IMG.heic`: same calibration, same depth, the
# same HEIC decoded), whole processes, interleaved, same machine, same run.
#
# The photo is the benchmark's 4032x3024 synthetic capture (bench-common.sh) encoded as one
# HEVC image at quality 75 with its 768x576 depth as an 8-bit disparity depth image and
# Apple's depth XMP (Scripts/make_portrait.py; Tests/python/portrait_files.py composes it).
#
#   ./Scripts/bench-portrait.sh
#   RUNS=9 ./Scripts/bench-portrait.sh
#
# Goal: the Portrait path takes at most 1.2x the JSON + HEIC path's time.
# Prints a summary and writes it to OUT/portrait-summary.md.
set -euo pipefail
cd "$(dirname "$0")/.."

raw=${RGBD_BENCH_OUT:-bench-out}/raw-portrait
# shellcheck source=Scripts/bench-common.sh
source Scripts/bench-common.sh

portrait=$out/portrait
if [ ! -f "$portrait/portrait.heic" ]; then
  echo "== composing the Portrait HEIC and its JSON twin into $portrait/ (once)" >&2
  "$py" Scripts/make_portrait.py "$capture" "$image" "$portrait"
fi

portrait_run() { timed "$1" "$bin/rgbd" rectify "$portrait/portrait.heic" -o "$out/portrait-out" -q; }
json_run() { timed "$1" "$bin/rgbd" rectify "$portrait/portrait-json.json" --image "$portrait/portrait.heic" -o "$out/portrait-out" -q; }

echo "== rgbd rectify: Portrait HEIC vs JSON + the same HEIC, $runs runs each, interleaved" >&2
portrait_run portrait.warmup
json_run json.warmup
for i in $(seq 1 "$runs"); do
  portrait_run "portrait.$i"
  json_run "json.$i"
done
cat /proc/loadavg >"$raw/loadavg-end.txt" 2>/dev/null || true

"$py" - "$raw" "$out/portrait-summary.md" "$portrait" "$runs" <<'PY'
import os, statistics, sys
raw, summary, portrait, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def times(kind):
    values = []
    for i in range(1, runs + 1):
        seconds, kib = open(os.path.join(raw, f"{kind}.{i}.time")).read().split()[:2]
        values.append((float(seconds), int(kib)))
    return values
p, j = times("portrait"), times("json")
pm, jm = statistics.median(t for t, _ in p), statistics.median(t for t, _ in j)
ratio = pm / jm
load = [open(os.path.join(raw, f)).read().split()[:3] for f in ("loadavg-start.txt", "loadavg-end.txt")]
lines = ["# Portrait HEIC vs JSON + HEIC: rgbd rectify, whole process", "",
         f"{runs} runs each, interleaved; photo {os.path.getsize(os.path.join(portrait, 'portrait.heic')) / 1e6:.2f} MB, "
         f"JSON {os.path.getsize(os.path.join(portrait, 'portrait-json.json')) / 1e6:.2f} MB; "
         f"load average {' '.join(load[0])} at start, {' '.join(load[1])} at end", "",
         "| input | median s | min s | max s | peak RSS MB |", "|---|---|---|---|---|"]
for name, values in (("Portrait HEIC (`rgbd rectify IMG.heic`)", p), ("JSON + HEIC (`--image IMG.heic`)", j)):
    t = [v for v, _ in values]
    lines.append(f"| {name} | {statistics.median(t):.3f} | {min(t):.3f} | {max(t):.3f} | {max(k for _, k in values) / 1024:.0f} |")
lines += ["", f"Portrait / JSON = {ratio:.2f} (goal <= 1.2: {'PASS' if ratio <= 1.2 else 'FAIL'})"]
text = "\n".join(lines) + "\n"
open(summary, "w").write(text)
print(text)
PY
echo "Summary written to $out/portrait-summary.md; raw outputs in $raw/" >&2
