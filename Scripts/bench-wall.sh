# Shared by bench-preview.sh and bench-info.sh (sourced, from the repository root, with
# $out set): the release build of rgbd and the 12 MP capture they time, wall-clock times
# of whole processes (one number per line in a file), and their median and range.

# build_rgbd_and_big_capture: builds rgbd and rgbd-synth (release, in $RGBD_SCRATCH or
# .build-bench), sets $bin to the products' folder and $capture to $out/big.json, a
# 4032x3024 JPEG + 768x576 depth capture generated once.
build_rgbd_and_big_capture() {
  local build=(swift build -c release --scratch-path "${RGBD_SCRATCH:-.build-bench}")
  echo "== building rgbd and rgbd-synth (release)" >&2
  "${build[@]}" --product rgbd >&2
  "${build[@]}" --product rgbd-synth >&2
  bin=$("${build[@]}" --show-bin-path)
  mkdir -p "$out"
  capture=$out/big.json
  if [ ! -f "$capture" ]; then
    echo "== generating the 12 MP capture (rgbd-synth)" >&2
    "$bin/rgbd-synth" -o "$out" --name big --color 4032x3024 --depth 768x576 >&2
  fi
}

now() { date +%s.%N; }

# wall_timed FILE COMMAND...: runs COMMAND (its output discarded; if it fails, its
# standard error is shown and the script exits) and appends its wall seconds to FILE.
wall_timed() {
  local file=$1 start end
  shift
  start=$(now)
  "$@" >/dev/null 2>"$file.err" || { cat "$file.err" >&2; exit 1; }
  end=$(now)
  rm -f "$file.err"
  echo "$start $end" | awk '{ printf "%.4f\n", $2 - $1 }' >>"$file"
}

# median FILE, range FILE: of the seconds in FILE, 3 decimals.
median() { sort -n "$1" | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3f", m }'; }
range() { sort -n "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f-%.3f", lo, hi }'; }
