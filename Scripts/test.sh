#!/usr/bin/env bash
# Runs every test: installs missing system libraries, builds in release mode with
# testing enabled (the ground-truth scenes render quickly only when optimized), runs the
# Swift tests (library, ground truth, the real rgbd binary), then the Python tests of the
# outputs (PLY interop with numpy / plyfile / Open3D's formulas), of the Python package
# against the real libRGBDKit.so, and of a C program compiled against rgbd.h alone.
set -euo pipefail
cd "$(dirname "$0")/.."

./Scripts/bootstrap.sh

echo "== building (release, testing enabled)" >&2
swift build -c release -Xswiftc -enable-testing --build-tests

echo "== swift tests" >&2
swift test -c release -Xswiftc -enable-testing --skip-build

echo "== python tests (real rgbd binary, numpy, plyfile)" >&2
python3 -m pip install -q --disable-pip-version-check -r Tests/python/requirements.txt
bin="$(swift build -c release -Xswiftc -enable-testing --show-bin-path)"
lib="$bin/libRGBDKit.so"
[ "$(uname -s)" = Darwin ] && lib="$bin/libRGBDKit.dylib"
RGBD_BIN="$bin/rgbd" RGBD_LIBRARY="$lib" python3 -m pytest -q -p no:cacheprovider Tests/python
