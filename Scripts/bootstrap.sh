#!/usr/bin/env bash
# Installs the system libraries rgbd builds against, when they are missing.
# Idempotent, non-interactive, and silent when everything is already there.
#   Debian/Ubuntu: libturbojpeg0-dev libpng-dev libtiff-dev libjson-c-dev libheif-dev pkg-config,
#     and for the tests libheif-examples (heif-enc); the libheif-plugin-* HEVC packages where
#     the distribution splits them out
#   macOS (Homebrew): jpeg-turbo libpng libtiff json-c libheif pkg-config
set -euo pipefail

pkgconfig_modules=(libturbojpeg libpng libtiff-4 json-c libheif)

missing_modules() {
  command -v pkg-config >/dev/null 2>&1 || { echo "pkg-config"; return; }
  local m
  for m in "${pkgconfig_modules[@]}"; do
    pkg-config --exists "$m" || echo "$m"
  done
  # The tests make HEIC files with libheif's encoder tool.
  command -v heif-enc >/dev/null 2>&1 || echo "heif-enc"
}

[ -z "$(missing_modules)" ] && exit 0

case "$(uname -s)" in
  Linux)
    if ! command -v apt-get >/dev/null 2>&1; then
      echo "bootstrap: missing $(missing_modules | tr '\n' ' ')and no apt-get; install them with your package manager" >&2
      exit 1
    fi
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "bootstrap: installing system libraries (apt-get)..." >&2
    export DEBIAN_FRONTEND=noninteractive
    log=$(mktemp)
    packages=(libturbojpeg0-dev libpng-dev libtiff-dev libjson-c-dev libheif-dev libheif-examples pkg-config)
    if ! $sudo apt-get update -qq >"$log" 2>&1; then
      cat "$log" >&2; rm -f "$log"
      echo "bootstrap: apt-get update failed (output above)" >&2
      exit 1
    fi
    # libheif 1.17+ ships its HEVC decoder and encoder as plugins (Debian 13, Ubuntu 24.04).
    for plugin in libheif-plugin-libde265 libheif-plugin-x265; do
      apt-cache show "$plugin" >/dev/null 2>&1 && packages+=("$plugin")
    done
    if ! $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >"$log" 2>&1; then
      cat "$log" >&2; rm -f "$log"
      echo "bootstrap: apt-get failed (output above)" >&2
      exit 1
    fi
    rm -f "$log"
    ;;
  Darwin)
    if ! command -v brew >/dev/null 2>&1; then
      echo "bootstrap: install Homebrew, then: brew install jpeg-turbo libpng libtiff json-c libheif pkg-config" >&2
      exit 1
    fi
    echo "bootstrap: installing system libraries (Homebrew)..." >&2
    brew install --quiet jpeg-turbo libpng libtiff json-c libheif pkg-config
    ;;
  *)
    echo "bootstrap: unsupported system $(uname -s)" >&2
    exit 1
    ;;
esac

still=$(missing_modules | tr '\n' ' ')
if [ -n "$still" ]; then
  echo "bootstrap: still missing after install: $still" >&2
  exit 1
fi
