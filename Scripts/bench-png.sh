#!/usr/bin/env bash
# Benchmarks rgbd's PNG writing (issue 15), all in the same run, on three captures: the
# synthetic 4032x3024 capture of the other benchmarks (noise sigma 6), the same scene
# without noise (smooth), and a real photograph (Benchmarks/photo, 5312x2988, CC0) put in
# place of a synthetic capture's JPEG (the calibration is synthetic, the pixels real).
#
#   ./Scripts/bench-png.sh
#   RUNS=5 ROUNDS=3 ./Scripts/bench-png.sh
#   MORE_PHOTOS=1 RUNS=5 ROUNDS=3 ./Scripts/bench-png.sh    (two more photographs, below)
#
# Per capture, in alternating rounds (the machine's speed drifts): rgbd-bench's
# encode_color_png (the default PNG, all cores, filtering included) against
# png_baseline_isal_single (ISA-L level 1, default window, deflating the same
# Paeth-filtered rows as one zlib stream on one thread; filtering not timed), and
# encode_depth_png; once, encode_color_png_small (--small-png). Bytes of each. Then the
# whole `rgbd rectify` on the photograph against Scripts/baseline_rectify.py (Python,
# OpenCV), interleaved.
#
# Environment: RUNS (timed runs per stage and whole-process runs, default 7), ROUNDS
# (default 3), RGBD_BENCH_OUT (captures and results, default bench-out), RGBD_SCRATCH
# (SwiftPM build path), RGBD_PNG_BEFORE (optional: the product folder of another build,
# e.g. of the commit before, whose rgbd-bench and rgbd run in the same rounds as "before").
set -euo pipefail
cd "$(dirname "$0")/.."

raw=${RGBD_BENCH_OUT:-bench-out}/png-raw
rounds=${ROUNDS:-3}
# shellcheck source=Scripts/bench-common.sh
source Scripts/bench-common.sh
before=${RGBD_PNG_BEFORE:-}

if [ ! -f "$out/smooth.json" ]; then
  "$bin/rgbd-synth" -o "$out" --name smooth --color 4032x3024 --depth 768x576 --quality 92 >/dev/null
fi
# The photograph, under a synthetic capture of its size (rgbd reads NAME.jpg beside NAME.json).
photo_jpeg=Benchmarks/photo/seeding_by_Clements_Engelhardt.jpg
if [ ! -f "$out/photo.json" ] || ! cmp -s "$photo_jpeg" "$out/photo.jpg"; then
  "$bin/rgbd-synth" -o "$out" --name photo --color 5312x2988 --depth 768x432 --quality 92 >/dev/null
  cp "$photo_jpeg" "$out/photo.jpg"
fi
captures=(bench smooth photo)
# MORE_PHOTOS=1: also the two photographs of Debian's wallpaper packages that the PNG
# choices were measured on besides the checked-in one (sunset sky 4272x2848, CC-BY-4.0,
# lomiri-wallpapers-16.04; bird on bark 6028x3391, CC-BY-SA-3.0, lomiri-wallpapers-20.04;
# licences in the packages' /usr/share/doc), fetched with `apt-get download` into
# OUT/photos (not checked in: 1.1 and 4.4 MB). Their captures are synthetic, as above.
if [ -n "${MORE_PHOTOS:-}" ]; then
  photos=$out/photos
  more_photo() {  # NAME PACKAGE FILE COLOR_SIZE DEPTH_SIZE
    local name=$1 package=$2 file=$3
    if [ ! -f "$photos/$file" ]; then
      mkdir -p "$photos/$package"
      (cd "$photos/$package" && apt-get download "$package" >&2 && dpkg-deb -x ./*.deb .)
      cp "$photos/$package/usr/share/backgrounds/$file" "$photos/$file"
    fi
    if [ ! -f "$out/$name.json" ] || ! cmp -s "$photos/$file" "$out/$name.jpg"; then
      "$bin/rgbd-synth" -o "$out" --name "$name" --color "$4" --depth "$5" --quality 92 >/dev/null
      cp "$photos/$file" "$out/$name.jpg"
    fi
    captures+=("$name")
  }
  more_photo sunset lomiri-wallpapers-16.04 sunset_by_Aitzol_Berasategi.jpg 4272x2848 768x512
  more_photo bird lomiri-wallpapers-20.04 Kleiber_by_Lukas_Baubkus.jpg 6028x3391 768x432
fi

for i in $(seq 1 "$rounds"); do
  for c in "${captures[@]}"; do
    echo "== round $i/$rounds: $c" >&2
    "$bin/rgbd-bench" "$out/$c.json" --runs "$runs" \
      --only 'encode_color_png$,png_baseline_isal_single,encode_depth_png' >"$raw/after.$c.round$i.txt" 2>/dev/null
    if [ -n "$before" ]; then
      "$before/rgbd-bench" "$out/$c.json" --runs "$runs" --only 'encode_color_png$,encode_depth_png' \
        >"$raw/before.$c.round$i.txt" 2>/dev/null
    fi
  done
done
for c in "${captures[@]}"; do
  echo "== --small-png: $c" >&2
  "$bin/rgbd-bench" "$out/$c.json" --runs 3 --only 'encode_color_png_small' >"$raw/after.$c.small.txt" 2>/dev/null
done

echo "== whole process on the photograph: rgbd rectify vs Scripts/baseline_rectify.py, $runs runs, interleaved" >&2
rgbd_run() { timed "$1" "$2/rgbd" rectify "$out/photo.json" -o "$out/$3" --timings -q; }
py_run() { timed "$1" "$py" Scripts/baseline_rectify.py "$out/photo.json" "$out/photo.jpg" "$out/png-py" --stages; }
rm -rf "$out/png-rgbd" "$out/png-before" "$out/png-py"
rgbd_run rgbd.warmup "$bin" png-rgbd
py_run py.warmup
if [ -n "$before" ]; then rgbd_run before.warmup "$before" png-before; fi
for i in $(seq 1 "$runs"); do
  rgbd_run "rgbd.$i" "$bin" png-rgbd
  py_run "py.$i"
  if [ -n "$before" ]; then rgbd_run "before.$i" "$before" png-before; fi
done
ls -l "$out"/png-*/photo.color.png | awk '{print $5, $NF}' >"$raw/photo-png-sizes.txt"

cat /proc/loadavg >"$raw/loadavg-end.txt" 2>/dev/null || true
echo >&2
"$py" Scripts/bench_png_summary.py "$raw" --markdown "$out/png-summary.md"
echo >&2
echo "Summary written to $out/png-summary.md; raw outputs in $raw/" >&2
