#!/usr/bin/env bash
# Installs the system libraries rgbd builds against, when they are missing.
# Idempotent, non-interactive, and silent when everything is already there.
#   Debian/Ubuntu: libturbojpeg0-dev libpng-dev libtiff-dev libjson-c-dev pkg-config
#   macOS (Homebrew): jpeg-turbo libpng libtiff json-c pkg-config
set -euo pipefail

pkgconfig_modules=(libturbojpeg libpng libtiff-4 json-c)

missing_modules() {
  command -v pkg-config >/dev/null 2>&1 || { echo "pkg-config"; return; }
  local m
  for m in "${pkgconfig_modules[@]}"; do
    pkg-config --exists "$m" || echo "$m"
  done
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
    if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends \
          libturbojpeg0-dev libpng-dev libtiff-dev libjson-c-dev pkg-config; } >"$log" 2>&1; then
      cat "$log" >&2; rm -f "$log"
      echo "bootstrap: apt-get failed (output above)" >&2
      exit 1
    fi
    rm -f "$log"
    ;;
  Darwin)
    if ! command -v brew >/dev/null 2>&1; then
      echo "bootstrap: install Homebrew, then: brew install jpeg-turbo libpng libtiff json-c pkg-config" >&2
      exit 1
    fi
    echo "bootstrap: installing system libraries (Homebrew)..." >&2
    brew install --quiet jpeg-turbo libpng libtiff json-c pkg-config
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
