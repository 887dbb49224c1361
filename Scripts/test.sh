#!/usr/bin/env bash
# Runs every test: installs missing system libraries, builds in release mode with
# testing enabled (the ground-truth scenes render quickly only when optimized; the same
# build as demo.sh's), runs the Swift tests (library, ground truth, the real rgbd
# binary), builds the shipped library (Scripts/build-library.sh), then the Python tests
# in .venv/: the outputs (PLY interop with numpy / plyfile / Open3D's formulas), the
# Python package against the shipped library, a C program compiled against rgbd.h alone,
# and the packaging (test_packaging.py: the wheel installed outside the repository,
# install.sh into a temporary prefix, the Swift example package).
set -euo pipefail
cd "$(dirname "$0")/.."

./Scripts/bootstrap.sh --python
# shellcheck source=Scripts/common.sh
source Scripts/common.sh

echo "== building (release, testing enabled)" >&2
"${swift_build[@]}" --build-tests

# The venv comes first: some Swift tests make their inputs with independent encoders
# from PyPI (LZFSE, OpenEXR) through $RGBD_TEST_PYTHON.
use_venv Tests/python/requirements.txt
export RGBD_TEST_PYTHON="$py"

echo "== swift tests" >&2
swift test "${swift_flags[@]}" --skip-build
# On a CPU with AVX2 the run above took the AVX2 kernels (Sources/CKernels); the sampling,
# PNG, HEVC, fusion and export tests again with the Swift loops that CPUs without AVX2 run.
if [ "$(uname -m)" = x86_64 ]; then
  echo "== swift tests of the kernels with RGBD_DISABLE_AVX2 (the Swift loops)" >&2
  RGBD_DISABLE_AVX2=1 swift test "${swift_flags[@]}" --skip-build \
    --filter 'Rectif|PNGCodec|HEVCDecoder|FusionTests|SceneExportTests|ExportVideoPictures'
fi

echo "== the shipped library (Scripts/build-library.sh)" >&2
dist=$(./Scripts/build-library.sh)
lib="$dist/libRGBDKit.so"
[ "$(uname -s)" = Darwin ] && lib="$dist/libRGBDKit.dylib"

echo "== the kernels' machine code (Scripts/check-kernels.sh)" >&2
./Scripts/check-kernels.sh "$lib" "$("${swift_build[@]}" --show-bin-path)/rgbd"

echo "== python tests (real rgbd binary, the shipped library, numpy, plyfile; packaging)" >&2
bin=$("${swift_build[@]}" --show-bin-path)
RGBD_BIN="$bin/rgbd" RGBD_LIBRARY="$lib" "$py" -m pytest -q -p no:cacheprovider Tests/python
