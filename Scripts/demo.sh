#!/usr/bin/env bash
# A new user's first command: installs what is missing, builds rgbd, runs `rgbd rectify`
# and `rgbd cloud` on the sample capture in Examples/, then on a small synthetic LiDAR scan
# (a Stray Scanner folder made by rgbd-synth: 30 frames), and says where the results are.
set -euo pipefail
cd "$(dirname "$0")/.."

./Scripts/bootstrap.sh
# shellcheck source=Scripts/common.sh
source Scripts/common.sh

echo "== building rgbd (release; the first build takes a minute or two)"
"${swift_build[@]}" --product rgbd
"${swift_build[@]}" --product rgbd-synth
bin=$("${swift_build[@]}" --show-bin-path)/rgbd
# That folder is .build/<platform triple>/release; SwiftPM links .build/release to it, so
# the binary is .build/release/rgbd on every platform: name it so.
[ .build/release/rgbd -ef "$bin" ] && bin=.build/release/rgbd

out=${1:-demo-output}
echo
echo "== rgbd rectify Examples/sample/shot.json -o $out"
"$bin" rectify Examples/sample/shot.json -o "$out"

echo
echo "== rgbd cloud Examples/sample/shot.json -o $out"
"$bin" cloud Examples/sample/shot.json -o "$out"

echo
echo "Results in $out/:"
for f in "$out"/shot.*; do
  printf '  %-40s %8s bytes\n' "$f" "$(wc -c <"$f" | tr -d ' ')"
done
echo
echo "== a scan: rgbd-synth scan -o $out --name scan (a synthetic Stray Scanner folder, 30 frames)"
"$(dirname "$bin")/rgbd-synth" scan --layout stray --frames 30 --size 640x480 -o "$out" --name scan >/dev/null
echo "== rgbd info $out/scan"
"$bin" info "$out/scan"
echo "== rgbd cloud $out/scan -o $out/scan.ply"
"$bin" cloud "$out/scan" -o "$out/scan.ply"
echo
cat <<TXT

  shot.color.png        rectified color (8-bit RGB)
  shot.depth.png        rectified depth, 16-bit, millimeters (0 = no depth)
  shot.depth.tiff       rectified depth, float32, meters (NaN = no depth)
  shot.intrinsics.json  pinhole intrinsics (Open3D: o3d.io.read_pinhole_camera_intrinsic)
  shot.ply              colored point cloud, meters, OpenCV camera frame
                        (opens in MeshLab, CloudCompare, Blender, Open3D)

  scan/                 a synthetic LiDAR scan as Stray Scanner writes it (rgb.mp4, depth/,
                        confidence/, odometry.csv, camera_matrix.csv, imu.csv; docs/scans.md)
  scan.ply              all its frames merged in the scan's world, one point per 1 cm cell

The sample is synthetic: Examples/sample/shot.truth.json describes the scene
(a checkerboard wall at 3 m, a floor, a box) so you can check the numbers.

The rgbd binary is $bin
(./Scripts/install.sh installs rgbd, the C library and the shell completions).
TXT
