#!/usr/bin/env bash
# Benchmarks HEIC decoding (issue "Real files"): rgbd's decoder (these files are in the
# common form rgbd decodes itself with libde265; libheif decodes the rest) against
# pillow-heif on the same files, in alternating rounds, same machine, same run.
#
# The files are made from a smooth 4032x3024 synthetic photo (phone photos are denoised:
# no added noise): as an iPhone stores it (a grid of 512-px HEVC tiles, 4:2:0, quality
# 75) and as one single 4032x3024 HEVC image (what most other encoders write).
#
#   ./Scripts/bench-heic.sh
#   RUNS=9 ROUNDS=5 ./Scripts/bench-heic.sh
#
# Goal: rgbd decodes each file no slower than pillow-heif (rgbd / pillow-heif <= 1.0).
# Prints a summary and writes it to OUT/heic-summary.md.
set -euo pipefail
cd "$(dirname "$0")/.."

raw=${RGBD_BENCH_OUT:-bench-out}/raw-heic
rounds=${ROUNDS:-5}
# shellcheck source=Scripts/bench-common.sh
source Scripts/bench-common.sh

smooth=$out/smooth
if [ ! -f "$smooth/photo.json" ]; then
  echo "== generating the smooth 4032x3024 photo into $smooth/ (once)" >&2
  "$bin/rgbd-synth" -o "$smooth" --name photo --color 4032x3024 --depth 768x576 --quality 95 >/dev/null
fi
for kind in grid single; do
  file=$smooth/photo.$kind.heic
  if [ ! -f "$file" ]; then
    tile=512; [ "$kind" = single ] && tile=0
    echo "== encoding $file (pillow-heif, tile $tile)" >&2
    "$py" Scripts/make_heic.py "$smooth/photo.jpg" "$file" --tile "$tile" --quality 75
  fi
done

for kind in grid single; do
  file=$smooth/photo.$kind.heic
  echo "== $kind: $rounds alternating rounds of $runs runs" >&2
  for i in $(seq 1 "$rounds"); do
    "$py" Scripts/baseline_heic.py "$file" --runs "$runs" >"$raw/$kind.pillow.round$i.txt"
    "$bin/rgbd-bench" "$smooth/photo.json" --photo "$file" --runs "$runs" --only 'decode_photo$' \
      >"$raw/$kind.rgbd.round$i.txt" 2>/dev/null
  done
done
cat /proc/loadavg >"$raw/loadavg-end.txt" 2>/dev/null || true

"$py" - "$raw" "$out/heic-summary.md" "$smooth" <<'PY'
import glob, os, re, statistics, sys
raw, summary, smooth = sys.argv[1:4]

def runs(pattern, name):
    values = []
    for path in sorted(glob.glob(os.path.join(raw, pattern))):
        for line in open(path):
            m = re.match(r"bench %s median_ms \S+ runs (.*)" % name, line)
            if m:
                values += [float(v) for v in m.group(1).split()]
    return values

def header():
    for path in sorted(glob.glob(os.path.join(raw, "*.pillow.round1.txt"))):
        for line in open(path):
            if line.startswith("#"):
                return line[1:].strip()
    return ""

lines = ["# HEIC decoding: rgbd vs pillow-heif", "",
         "Same file, same machine, alternating rounds, runs pooled; median ms.", "",
         f"pillow-heif: {header()}", "",
         f"loadavg: {open(os.path.join(raw, 'loadavg-start.txt')).read().strip()} -> "
         f"{open(os.path.join(raw, 'loadavg-end.txt')).read().strip()}", "",
         "| file | size | rgbd ms | pillow-heif ms | rgbd / pillow-heif | goal <= 1.0 |",
         "|---|---|---|---|---|---|"]
failed = False
for kind, label in [("grid", "4032x3024, grid of 512-px tiles (iPhone)"), ("single", "4032x3024, one image")]:
    ours, theirs = runs(f"{kind}.rgbd.round*.txt", "decode_photo"), runs(f"{kind}.pillow.round*.txt", "pillow_heif_decode")
    if not ours or not theirs:
        lines.append(f"| {label} | | missing | missing | | FAIL |")
        failed = True
        continue
    a, b = statistics.median(ours), statistics.median(theirs)
    ok = a <= b
    failed |= not ok
    size = os.path.getsize(os.path.join(smooth, f"photo.{kind}.heic")) / 1e6
    lines.append(f"| {label} | {size:.2f} MB | {a:.1f} | {b:.1f} | {a / b:.2f} | {'PASS' if ok else 'FAIL'} |")
text = "\n".join(lines) + "\n"
open(summary, "w").write(text)
print(text)
PY
echo "Summary written to $out/heic-summary.md; raw outputs in $raw/" >&2
