#!/usr/bin/env bash
# Builds what rgbd ships: the C-ABI shared library libRGBDKit.so (.dylib on macOS) and,
# with --cli, the rgbd command. Used by install.sh, the Python package's build hook
# (python/setup.py) and test.sh. Prints the folder that holds them on stdout; SwiftPM's
# output goes to stderr.
#
#   Scripts/build-library.sh [--cli]
#
# Release mode in its own build folder, .build/dist/ (the development build in .build/
# compiles with testing enabled). On Linux the Swift runtime is linked in statically
# (`-static-stdlib`, given here rather than in Package.swift, where it would be an
# unsafe flag that SwiftPM refuses in a versioned dependency): the library needs no
# Swift toolchain to load (no libswiftCore.so among its NEEDED entries) and finds its
# neighbours through RUNPATH $ORIGIN; the rgbd binary likewise. An up-to-date build
# costs a second or two (SwiftPM rebuilds only what changed).
set -euo pipefail
cd "$(dirname "$0")/.."

products=(RGBDKit)
case "${1:-}" in
  "") ;;
  --cli) products+=(rgbd) ;;
  *) echo "usage: $0 [--cli]" >&2; exit 2 ;;
esac

./Scripts/bootstrap.sh >&2

build=(swift build -c release --scratch-path .build/dist)
[ "$(uname -s)" = Linux ] && build+=(-Xswiftc -static-stdlib)
for product in "${products[@]}"; do
  echo "== building $product (release, .build/dist/)" >&2
  "${build[@]}" --product "$product" >&2
done
"${build[@]}" --show-bin-path
