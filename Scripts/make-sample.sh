#!/usr/bin/env bash
# Regenerates Examples/sample/ (deterministic: the same files on every run).
set -euo pipefail
cd "$(dirname "$0")/.."
./Scripts/bootstrap.sh
swift build -c release --product rgbd-synth
"$(swift build -c release --show-bin-path)/rgbd-synth" -o Examples/sample --name shot \
  --color 1344x1008 --depth 256x192 --quality 92 --color-noise 2 --depth-noise 0.0005 --holes
