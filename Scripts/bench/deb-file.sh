#!/usr/bin/env bash
# Copies one file out of a Debian package, fetched by name with `apt-get download` (no
# root, nothing installed): the benchmark's extra photographs (Benchmarks/cases.toml,
# workloads sunset and bird).
#
#   Scripts/bench/deb-file.sh PACKAGE PATH-IN-PACKAGE DESTINATION
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 PACKAGE PATH-IN-PACKAGE DESTINATION" >&2; exit 2; }
package=$1 inside=$2 destination=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download "$package" >&2 && dpkg-deb -x ./*.deb root)
cp "$work/root/$inside" "$destination"
