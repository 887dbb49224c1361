#!/usr/bin/env bash
# Checks the machine code of a release build for a known way the sampling kernels lose
# half their speed: a call to a specialization of the standard library's generic SIMD
# lane conversion (`SIMD8<Int32>(truncatingIfNeeded:)` and the like) that the optimizer
# left out of line. The kernels convert lanes with Sources/RGBDRectification/Kernels/Lanes.swift
# instead; this check keeps it so (it found the RGB kernel 2.2x slower once).
#
#   ./Scripts/check-kernels.sh BINARY_OR_LIBRARY...
#
# Linux (objdump); on macOS it checks with `otool -tV`. On x86-64 Linux it also checks that
# the AVX2 kernels (Sources/CKernels) are in the file and compiled to AVX2 code.
set -euo pipefail
status=0
for file in "$@"; do
  if command -v objdump >/dev/null 2>&1; then
    listing=$(objdump -d --no-show-raw-insn "$file")
  elif command -v otool >/dev/null 2>&1; then
    listing=$(otool -tV "$file")
  else
    echo "$(basename "$0"): neither objdump nor otool is installed (binutils)" >&2
    exit 2
  fi
  # Calls whose target is a specialization of a SIMD conversion initializer.
  calls=$(grep -E 'call' <<<"$listing" | grep -E 'SIMD[0-9]*V.*truncatingIfNeeded|truncatingIfNeeded.*SIMD' || true)
  if [ -n "$calls" ]; then
    echo "$(basename "$0"): $file calls generic SIMD lane conversions out of line (use Lanes.swift):" >&2
    head -5 <<<"$calls" >&2
    status=1
  fi
  # On x86-64 (Linux), the AVX2 kernels must be there and compiled to AVX2 code (ymm
  # registers): a build that lost their target attribute would still pass every test,
  # only slower.
  if [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] && command -v objdump >/dev/null 2>&1; then
    for kernel in rgbd_sample1_direct_avx2 rgbd_sample3_direct_avx2 rgbd_sample4_direct_avx2 \
      rgbd_sample3_prepared_avx2 rgbd_paeth_filter_avx2 rgbd_ycbcr420_rows_avx2 rgbd_tsdf_block_avx2 \
      rgbd_depth_units_avx2 rgbd_ycbcr420_recode_rows_avx2; do
      code=$(objdump -d --no-show-raw-insn --disassemble="$kernel" "$file")
      if ! grep -q "<$kernel>:" <<<"$code" || ! grep -q ymm <<<"$code"; then
        echo "$(basename "$0"): $file has no AVX2 code in $kernel (Sources/CKernels)" >&2
        status=1
      fi
    done
  fi
done
[ "$status" = 0 ] && echo "== kernels: no out-of-line SIMD lane conversions in $*; AVX2 kernels present" >&2
exit "$status"
