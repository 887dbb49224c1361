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
# and results, default bench-out), RGBD_SCRATCH (SwiftPM build path, default .build).
# Exits non-zero only if something failed to run; a missed goal shows FAIL.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-7}
out=${RGBD_BENCH_OUT:-bench-out}
raw=$out/raw-cloud
capture=$out/bench.json
image=$out/bench.jpg
rectified=$out/rectified

./Scripts/bootstrap.sh
# The interpreter itself, not a wrapper (pyenv shims cost tens of ms per start).
py=$(python3 -c 'import sys; print(sys.executable)')
echo "== python requirements (Scripts/requirements-bench.txt)" >&2
PIP_ROOT_USER_ACTION=ignore "$py" -m pip install -q --disable-pip-version-check -r Scripts/requirements-bench.txt

build=(swift build -c release)
if [ -n "${RGBD_SCRATCH:-}" ]; then build+=(--scratch-path "$RGBD_SCRATCH"); fi
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
# to raw/TAG.time, stdout and stderr to raw/TAG.out and raw/TAG.err.
timed() {
  local tag=$1
  shift
  if ! /usr/bin/time -f '%e %M' -o "$raw/$tag.time" "$@" >"$raw/$tag.out" 2>"$raw/$tag.err"; then
    echo "bench-cloud: failed: $*" >&2
    cat "$raw/$tag.err" >&2
    exit 1
  fi
}
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
