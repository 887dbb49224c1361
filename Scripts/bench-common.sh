# Shared setup of the benchmarks (sourced by bench-rectify.sh and bench-cloud.sh, with
# $raw set to their raw-output folder): installs what is missing, builds release, makes
# the benchmark capture once, and defines `timed`.
#
# Sets: runs, out, capture, image, py (.venv's interpreter), bin (the build's product folder).

runs=${RUNS:-7}
out=${RGBD_BENCH_OUT:-bench-out}
capture=$out/bench.json
image=$out/bench.jpg

./Scripts/bootstrap.sh --python
# shellcheck source=Scripts/common.sh
source Scripts/common.sh
# The repository's .venv/ (the interpreter itself, not a wrapper such as a pyenv shim).
use_venv Scripts/requirements-bench.txt

# Its own build folder, so a benchmark and demo.sh/test.sh (whose build enables testing)
# do not recompile each other's.
build=(swift build -c release --scratch-path "${RGBD_SCRATCH:-.build-bench}")
echo "== building (release)" >&2
"${build[@]}"
bin=$("${build[@]}" --show-bin-path)

if [ ! -f "$capture" ] || [ ! -f "$image" ]; then
  echo "== generating the capture into $out/ (once; kept for later runs)" >&2
  "$bin/rgbd-synth" -o "$out" --name bench --color 4032x3024 --depth 768x576 \
    --quality 92 --color-noise 6 --depth-noise 0.002 >/dev/null
fi

rm -rf "$raw"
mkdir -p "$raw"
# Other work on the machine skews everything: the summary shows the load around the runs.
cat /proc/loadavg >"$raw/loadavg-start.txt" 2>/dev/null || true

# timed TAG COMMAND...: runs COMMAND under /usr/bin/time; wall seconds and peak KiB go
# to $raw/TAG.time, stdout and stderr to $raw/TAG.out and $raw/TAG.err.
timed() {
  local tag=$1
  shift
  if ! /usr/bin/time -f '%e %M' -o "$raw/$tag.time" "$@" >"$raw/$tag.out" 2>"$raw/$tag.err"; then
    echo "$(basename "$0"): failed: $*" >&2
    cat "$raw/$tag.err" >&2
    exit 1
  fi
}
