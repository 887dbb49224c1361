#!/usr/bin/env bash
# Removes what Scripts/install.sh installed under PREFIX (the same default: /usr/local as
# root, else $HOME/.local), and nothing else:
#
#   ./Scripts/uninstall.sh [PREFIX]
#
# The files and folders are those install.sh listed in PREFIX/share/rgbd/install-manifest.txt:
# every file it installed is removed, then every folder it created, deepest first, if it
# is empty (a folder that was there before the install, or that holds other files now,
# stays). Without a manifest (nothing installed there, or by a version of install.sh that
# wrote none) its fixed list of files is removed, and no folder.
set -euo pipefail

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
if [ ! -d "$prefix" ]; then
  echo "$0: $prefix: no such directory" >&2
  exit 1
fi
prefix=$(cd "$prefix" && pwd)
manifest=share/rgbd/install-manifest.txt

files=()
folders=()
if [ -f "$prefix/$manifest" ]; then
  while read -r kind path; do
    # Only plain relative paths below PREFIX.
    case "$path" in
      "" | /* | ..* | */../* | */..) echo "$0: $prefix/$manifest: ignoring '$path'" >&2; continue ;;
    esac
    case "$kind" in
      file) files+=("$path") ;;
      folder) folders+=("$path") ;;
    esac
  done <"$prefix/$manifest"
else
  library=libRGBDKit.so
  [ "$(uname -s)" = Darwin ] && library=libRGBDKit.dylib
  files=(bin/rgbd "lib/$library" include/rgbd.h lib/pkgconfig/rgbd.pc
         share/bash-completion/completions/rgbd share/zsh/site-functions/_rgbd
         share/fish/vendor_completions.d/rgbd.fish share/man/man1/rgbd.1)
fi

removed=0
for file in ${files[@]+"${files[@]}"}; do
  if [ -e "$prefix/$file" ] || [ -L "$prefix/$file" ]; then
    rm -f "$prefix/$file"
    echo "removed $prefix/$file" >&2
    removed=$((removed + 1))
  fi
done
# The deepest folders first, each only if it is empty now.
if [ ${#folders[@]} -gt 0 ]; then
  while IFS= read -r folder; do
    if [ -d "$prefix/$folder" ] && rmdir "$prefix/$folder" 2>/dev/null; then
      echo "removed $prefix/$folder/" >&2
    fi
  done < <(printf '%s\n' "${folders[@]}" | awk -F/ '{ print NF "\t" $0 }' | sort -rn -k1,1 | cut -f2-)
fi

if [ "$(uname -s)" = Linux ] && { [ "$prefix" = /usr/local ] || [ "$prefix" = /usr ]; } &&
   [ "$(id -u)" -eq 0 ] && command -v ldconfig >/dev/null 2>&1; then
  ldconfig 2>/dev/null || true
fi
if [ "$removed" -eq 0 ]; then
  echo "nothing of rgbd was installed in $prefix" >&2
else
  echo "rgbd removed from $prefix ($removed files)" >&2
fi
