#!/usr/bin/env bash
# Installs rgbd under PREFIX (default /usr/local as root, else $HOME/.local):
#
#   PREFIX/bin/rgbd                                  the command
#   PREFIX/lib/libRGBDKit.so (.dylib on macOS)       the C library
#   PREFIX/include/rgbd.h                            its header
#   PREFIX/lib/pkgconfig/rgbd.pc                     cc app.c $(pkg-config --cflags --libs rgbd)
#   PREFIX/share/bash-completion/completions/rgbd    shell completions
#   PREFIX/share/zsh/site-functions/_rgbd
#   PREFIX/share/fish/vendor_completions.d/rgbd.fish
#   PREFIX/share/man/man1/rgbd.1                     man rgbd (Scripts/make-manual.sh)
#   PREFIX/share/rgbd/install-manifest.txt           what this installed, for uninstall.sh
#
#   ./Scripts/install.sh [PREFIX]
#
# Scripts/uninstall.sh PREFIX removes exactly these files, and the folders this created
# if they are empty then.
#
# Builds with Scripts/build-library.sh (release, Swift runtime linked in statically on
# Linux, so neither the binary nor the library needs the Swift toolchain at run time).
# The library keeps SwiftPM's name, libRGBDKit: the pkg-config file links it with
# -lRGBDKit and records PREFIX/lib as the program's run path, so programs built with it
# run without LD_LIBRARY_PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -gt 1 ] || [[ "${1:-}" == -* ]]; then
  echo "usage: $0 [PREFIX]   (default: /usr/local as root, else \$HOME/.local)" >&2
  exit 2
fi
if [ $# -eq 1 ]; then
  prefix=$1
elif [ "$(id -u)" -eq 0 ]; then
  prefix=/usr/local
else
  prefix=$HOME/.local
fi
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

# SwiftPM's output is shown as it comes and also kept, to explain the one warning it gives
# (below); the folder build-library.sh prints on stdout goes to a file.
build_log=$(mktemp "${TMPDIR:-/tmp}/rgbd-install.XXXXXX")
build_out=$(mktemp "${TMPDIR:-/tmp}/rgbd-install.XXXXXX")
trap 'rm -f "$build_log" "$build_out"' EXIT
./Scripts/build-library.sh --cli 2>&1 >"$build_out" | tee "$build_log" >&2
bin=$(cat "$build_out")
# On Linux, linking the rgbd command with the Swift runtime built in (-static-stdlib) makes
# the linker warn "the use of `mktemp' is dangerous". The call is in the Swift toolchain's
# own libFoundationEssentials.a (Data+Writing.swift.o, createTemporaryFile: a deliberate
# use, swiftlang/swift-foundation issue 1358), which swift-argument-parser brings in
# through FoundationEssentials; rgbd's code neither imports Foundation nor calls it (its
# temporary files come from mkstemp, Sources/RGBDFoundation/Foundation/FileSystem.swift), and the
# library, built without the argument parser, links without the warning. It cannot be
# removed from here without giving up the static runtime, so say what it is.
if grep -q "use of \`mktemp' is dangerous" "$build_log"; then
  cat >&2 <<'TXT'
Note: the linker's warning about `mktemp' above comes from the Swift toolchain's static
Foundation (libFoundationEssentials.a, Data+Writing.swift.o; swiftlang/swift-foundation
issue 1358), linked into rgbd because swift-argument-parser uses it. rgbd never calls that
code; nothing is wrong with the build.
TXT
fi
library=libRGBDKit.so
[ "$(uname -s)" = Darwin ] && library=libRGBDKit.dylib
version=$("$bin/rgbd" --version)

echo "== installing rgbd $version into $prefix" >&2
# The folders the files go into, each after its parent; those that do not exist yet are
# created and recorded in the manifest (with those an earlier install recorded), so that
# uninstall.sh removes them again, and no folder that was there before.
folders=(bin lib lib/pkgconfig include share share/bash-completion share/bash-completion/completions
         share/zsh share/zsh/site-functions share/fish share/fish/vendor_completions.d
         share/man share/man/man1 share/rgbd)
manifest=share/rgbd/install-manifest.txt
created=()
if [ -f "$prefix/$manifest" ]; then
  while read -r kind path; do
    [ "$kind" = folder ] && created+=("$path")
  done <"$prefix/$manifest"
fi
for folder in "${folders[@]}"; do
  if [ ! -d "$prefix/$folder" ]; then
    created+=("$folder")
    install -d "$prefix/$folder"
  fi
done
install -m 755 "$bin/rgbd" "$prefix/bin/rgbd"
install -m 755 "$bin/$library" "$prefix/lib/$library"
install -m 644 Sources/CRGBD/include/rgbd.h "$prefix/include/rgbd.h"

cat >"$prefix/lib/pkgconfig/rgbd.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: rgbd
Description: Rectify iPhone depth captures and back-project them to point clouds (C interface)
Version: $version
Libs: -L\${libdir} -lRGBDKit -Wl,-rpath,\${libdir}
Cflags: -I\${includedir}
PC

"$bin/rgbd" --generate-completion-script bash >"$prefix/share/bash-completion/completions/rgbd"
"$bin/rgbd" --generate-completion-script zsh >"$prefix/share/zsh/site-functions/_rgbd"
"$bin/rgbd" --generate-completion-script fish >"$prefix/share/fish/vendor_completions.d/rgbd.fish"
./Scripts/make-manual.sh "$bin/rgbd" >"$prefix/share/man/man1/rgbd.1"

# The manifest: every file installed, then the folders created (parents first), paths
# relative to PREFIX; uninstall.sh reads it.
{
  for file in bin/rgbd "lib/$library" include/rgbd.h lib/pkgconfig/rgbd.pc \
    share/bash-completion/completions/rgbd share/zsh/site-functions/_rgbd \
    share/fish/vendor_completions.d/rgbd.fish share/man/man1/rgbd.1 "$manifest"; do
    echo "file $file"
  done
  for folder in ${created[@]+"${created[@]}"}; do echo "folder $folder"; done
} | awk '!seen[$0]++' >"$prefix/$manifest.new"
mv "$prefix/$manifest.new" "$prefix/$manifest"

# A system-wide library folder: refresh the loader's cache (for programs linked without
# the pkg-config file's run path).
if [ "$(uname -s)" = Linux ] && { [ "$prefix" = /usr/local ] || [ "$prefix" = /usr ]; } &&
   [ "$(id -u)" -eq 0 ] && command -v ldconfig >/dev/null 2>&1; then
  ldconfig 2>/dev/null || true
fi

cat >&2 <<TXT
Installed:
  $prefix/bin/rgbd
  $prefix/lib/$library
  $prefix/include/rgbd.h
  $prefix/lib/pkgconfig/rgbd.pc
  completions for bash, zsh and fish under $prefix/share/
  $prefix/share/man/man1/rgbd.1
Remove them with: ./Scripts/uninstall.sh $prefix
TXT
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "Add $prefix/bin to PATH to run rgbd by name." >&2 ;;
esac
if ! command -v pkg-config >/dev/null 2>&1 || [ "$(pkg-config --variable=prefix rgbd 2>/dev/null)" != "$prefix" ]; then
  echo "For pkg-config: export PKG_CONFIG_PATH=$prefix/lib/pkgconfig\${PKG_CONFIG_PATH:+:\$PKG_CONFIG_PATH}" >&2
fi
