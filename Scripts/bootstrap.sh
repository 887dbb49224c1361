#!/usr/bin/env bash
# Installs the system libraries rgbd builds against, when they are missing; with
# --python also what `python3 -m venv` needs (test.sh and the benchmarks keep their
# Python packages in .venv/). Idempotent, non-interactive, and silent when everything is
# already there.
#   Debian/Ubuntu: libturbojpeg0-dev libpng-dev libtiff-dev libjson-c-dev libheif-dev libisal-dev
#                  libde265-dev libdeflate-dev libcairo2-dev libavformat-dev libavcodec-dev
#                  libavutil-dev libswscale-dev libopenexr-dev libproj-dev fonts-dejavu-core pkg-config,
#                  libapriltag-dev (AprilTag 3: markers),
#                  for the tests libheif-examples (heif-enc), ffmpeg (the command, which makes test
#                  videos), binutils (objdump), libimage-exiftool-perl (exiftool: an independent
#                  EXIF reader the geotag tests compare with), and the libheif-plugin-* HEVC
#                  packages where the distribution splits them out
#                  libjs-three (three.js r111, which `rgbd fuse -o room.html` embeds, found at run time
#                  in /usr/share/javascript/three),
#                  (--python: python3 python3-venv, when `python3 -m venv` cannot work)
#                  (--interop: chromium blender python3-numpy (Blender's glTF importer needs it), the heavy
#                  optional tools of Scripts/interop_mesh.py and
#                  Tests/python/test_web_viewer.py, which skip without them)
#   macOS (Homebrew): jpeg-turbo libpng libtiff json-c libheif libde265 isa-l libdeflate cairo ffmpeg openexr
#                     apriltag
#                     proj pkg-config exiftool
#                     (three.js: Homebrew has no formula; set RGBD_THREE_DIR to a three.js release's
#                     folder, r111 to r147, e.g. `npm install three@0.147.0` -> node_modules/three; docs/fuse.md)
#                     (--interop: the casks chromium blender)
set -euo pipefail

with_python=false
with_interop=false
for arg in "$@"; do
  case "$arg" in
    --python) with_python=true ;;
    --interop) with_interop=true ;;
    *) echo "usage: $0 [--python] [--interop]" >&2; exit 2 ;;
  esac
done

pkgconfig_modules=(libturbojpeg libpng libtiff-4 json-c libheif libde265 libisal libdeflate cairo
                   libavformat libavcodec libavutil libswscale OpenEXR proj
                   apriltag)

missing_modules() {
  command -v pkg-config >/dev/null 2>&1 || { echo "pkg-config"; return; }
  local m
  for m in "${pkgconfig_modules[@]}"; do
    pkg-config --exists "$m" || echo "$m"
  done
  # The tests make HEIC files with libheif's encoder tool.
  command -v heif-enc >/dev/null 2>&1 || echo "heif-enc"
  # ... and videos with FFmpeg's command-line tool.
  command -v ffmpeg >/dev/null 2>&1 || echo "ffmpeg"
  # Scripts/check-kernels.sh reads the machine code with objdump (binutils).
  [ "$(uname -s)" != Linux ] || command -v objdump >/dev/null 2>&1 || echo "objdump"
  # The geotag tests compare rgbd's EXIF reading with ExifTool's.
  command -v exiftool >/dev/null 2>&1 || echo "exiftool"
  # rgbd fuse -o room.html embeds three.js (Debian's and Ubuntu's libjs-three; no Homebrew formula).
  [ "$(uname -s)" != Linux ] || [ -f /usr/share/javascript/three/build/three.min.js ] || echo "libjs-three"
}

# --interop: a browser for the web page's tests and Blender for the interop script.
missing_interop() {
  $with_interop || return 0
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || echo "chromium"
  command -v blender >/dev/null 2>&1 || echo "blender"
  # Debian's Blender imports glTF with the system's NumPy.
  [ "$(uname -s)" != Linux ] || [ -d /usr/lib/python3/dist-packages/numpy ] || echo "python3-numpy"
}

# Debian's python3 comes without ensurepip (package python3-venv), so `python3 -m venv`
# fails there until it is installed. $PYTHON overrides the interpreter, as in common.sh.
python_venv_missing() {
  $with_python && ! "${PYTHON:-python3}" -c 'import ensurepip, venv' >/dev/null 2>&1
}

[ -z "$(missing_modules)" ] && ! python_venv_missing && [ -z "$(missing_interop)" ] && exit 0

case "$(uname -s)" in
  Linux)
    if ! command -v apt-get >/dev/null 2>&1; then
      echo "bootstrap: missing $(missing_modules | tr '\n' ' ')$(missing_interop | tr '\n' ' ')$(python_venv_missing && echo 'python3-venv ')and no apt-get; install them with your package manager" >&2
      exit 1
    fi
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    packages=()
    [ -n "$(missing_modules)" ] && packages+=(libturbojpeg0-dev libpng-dev libtiff-dev libjson-c-dev libheif-dev
                                              libde265-dev libisal-dev libdeflate-dev libheif-examples libcairo2-dev
                                              libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libopenexr-dev
                                              libproj-dev ffmpeg fonts-dejavu-core pkg-config binutils libimage-exiftool-perl
                                              libapriltag-dev libjs-three)
    python_venv_missing && packages+=(python3 python3-venv)
    [ -n "$(missing_interop)" ] && packages+=(chromium blender python3-numpy)
    echo "bootstrap: installing ${packages[*]} (apt-get)..." >&2
    export DEBIAN_FRONTEND=noninteractive
    log=$(mktemp)
    if ! $sudo apt-get update -qq >"$log" 2>&1; then
      cat "$log" >&2; rm -f "$log"
      echo "bootstrap: apt-get update failed (output above)" >&2
      exit 1
    fi
    # libheif 1.17+ ships its HEVC decoder and encoder as plugins (Debian 13, Ubuntu 24.04).
    if [ -n "$(missing_modules)" ]; then
      for plugin in libheif-plugin-libde265 libheif-plugin-x265; do
        apt-cache show "$plugin" >/dev/null 2>&1 && packages+=("$plugin")
      done
    fi
    if ! $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >"$log" 2>&1; then
      cat "$log" >&2; rm -f "$log"
      echo "bootstrap: apt-get failed (output above)" >&2
      exit 1
    fi
    rm -f "$log"
    ;;
  Darwin)
    if [ -n "$(missing_interop)" ]; then
      command -v brew >/dev/null 2>&1 || { echo "bootstrap: install Homebrew, then: brew install --cask chromium blender" >&2; exit 1; }
      echo "bootstrap: installing chromium blender (Homebrew casks)..." >&2
      brew install --quiet --cask chromium blender
    fi
    [ -z "$(missing_modules)" ] && exit 0   # Python: any python3 with venv will do
    if ! command -v brew >/dev/null 2>&1; then
      echo "bootstrap: install Homebrew, then: brew install jpeg-turbo libpng libtiff json-c libheif libde265 isa-l libdeflate cairo ffmpeg openexr apriltag proj pkg-config exiftool" >&2
      exit 1
    fi
    echo "bootstrap: installing system libraries (Homebrew)..." >&2
    brew install --quiet jpeg-turbo libpng libtiff json-c libheif libde265 isa-l libdeflate cairo ffmpeg openexr apriltag proj \
      pkg-config exiftool
    ;;
  *)
    echo "bootstrap: unsupported system $(uname -s)" >&2
    exit 1
    ;;
esac

still=$(missing_modules | tr '\n' ' ')$(missing_interop | tr '\n' ' ')
if [ "$(uname -s)" = Linux ] && python_venv_missing; then still+="python3 venv (ensurepip) "; fi
if [ -n "$still" ]; then
  echo "bootstrap: still missing after install: $still" >&2
  exit 1
fi
