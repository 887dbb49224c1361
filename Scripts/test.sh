#!/usr/bin/env bash
# Runs every test: installs missing system libraries, builds in release mode with
# testing enabled (the ground-truth scenes render quickly only when optimized), and runs
# the Swift tests (library, ground truth, the real rgbd binary).
set -euo pipefail
cd "$(dirname "$0")/.."

./Scripts/bootstrap.sh

echo "== building (release, testing enabled)" >&2
swift build -c release -Xswiftc -enable-testing --build-tests

echo "== swift tests" >&2
swift test -c release -Xswiftc -enable-testing --skip-build
