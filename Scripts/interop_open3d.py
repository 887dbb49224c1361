#!/usr/bin/env python3
"""Optional interop check of `rgbd cloud` against Open3D itself (not run by the tests).

    python3 Scripts/interop_open3d.py [CAPTURE.json] [--rgbd BIN] [--keep DIR]
    python3 Scripts/interop_open3d.py --depth NAME.depth.png --intrinsics NAME.intrinsics.json
                                      --ply NAME.ply

With a capture (default Examples/sample/shot.json), runs `rgbd rectify` and
`rgbd cloud --keep-edges` on it into a temporary directory (or --keep DIR); with --depth,
--intrinsics and --ply, uses existing files. Then loads the millimeter depth PNG with
o3d.io.read_image, the intrinsics sidecar with o3d.io.read_pinhole_camera_intrinsic, builds
PointCloud.create_from_depth_image(depth, intrinsic, depth_scale=1000, depth_trunc=inf) and
compares it with rgbd's PLY read by o3d.io.read_point_cloud: same number of points, same
order, within 0.5 mm (the PNG's millimeter rounding).

With a capture it also checks the pixel-aligned pairs of `rgbd rectify --align-to depth`
and `--align-to color` through Open3D's RGBD path: o3d.io.read_image of NAME.color.png and
NAME.depth.png, RGBDImage.create_from_color_and_depth(color, depth, depth_scale=1000,
depth_trunc=inf, convert_rgb_to_intensity=False) (the default depth_trunc, 3.0 m, would drop
everything from 3 m on), PointCloud.create_from_rgbd_image with the sidecar's intrinsics.
At the depth size the points and colors must be rgbd's PLY's (colors exactly); at the color
size, one point per nonzero depth pixel, each at the back-projection of the depth TIFF within
0.5 mm and with that pixel's color. Exits 1 on a mismatch.

Open3D is a large install, so this script is not part of the test requirements: without it,
it prints how to install it and exits 0. (Tests/python/test_cloud_interop.py checks the same
equivalence with numpy.)
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOLERANCE_M = 0.5e-3 + 1e-6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("capture", nargs="?", default=str(REPO / "Examples/sample/shot.json"))
    ap.add_argument("--rgbd", default=os.environ.get("RGBD_BIN",
                                                     str(REPO / ".build/release/rgbd")))
    ap.add_argument("--keep", metavar="DIR", help="write rgbd's outputs here (kept)")
    ap.add_argument("--depth", help="existing NAME.depth.png (uint16 millimeters)")
    ap.add_argument("--intrinsics", help="existing NAME.intrinsics.json")
    ap.add_argument("--ply", help="existing PLY from `rgbd cloud --keep-edges`")
    args = ap.parse_args()

    try:
        import numpy as np
        import open3d as o3d
    except ImportError as err:
        print(f"interop_open3d: Open3D is not importable ({err}).\n"
              "Install it to run this check:  python3 -m pip install open3d\n"
              "(a large install: a ~400 MB wheel plus dash/plotly/flask. On a minimal Linux\n"
              " `import open3d` may also need libusb-1.0: `apt-get install libusb-1.0-0`.)\n"
              "Skipping: the numpy equivalence test in Tests/python covers the same math.")
        return 0

    given = [args.depth, args.intrinsics, args.ply]
    if any(given) and not all(given):
        ap.error("--depth, --intrinsics and --ply go together")

    with tempfile.TemporaryDirectory(prefix="rgbd-o3d-") as tmp:
        if all(given):
            depth_path, intr_path, ply_path = map(Path, given)
        else:
            out = Path(args.keep) if args.keep else Path(tmp)
            out.mkdir(parents=True, exist_ok=True)
            stem = Path(args.capture).stem
            for cmd in (["rectify", args.capture, "-o", str(out), "-q"],
                        ["cloud", args.capture, "-o", str(out / f"{stem}.ply"), "-q",
                         "--keep-edges"]):
                subprocess.run([args.rgbd, *cmd], check=True)
            depth_path = out / f"{stem}.depth.png"
            intr_path = out / f"{stem}.intrinsics.json"
            ply_path = out / f"{stem}.ply"

        depth = o3d.io.read_image(str(depth_path))
        intrinsic = o3d.io.read_pinhole_camera_intrinsic(str(intr_path))
        if intrinsic.width <= 0 or intrinsic.height <= 0:
            print(f"interop_open3d: Open3D could not read {intr_path}", file=sys.stderr)
            return 1
        expected = np.asarray(o3d.geometry.PointCloud.create_from_depth_image(
            depth, intrinsic, depth_scale=1000.0, depth_trunc=math.inf).points)
        cloud = o3d.io.read_point_cloud(str(ply_path))
        got = np.asarray(cloud.points)

        fx, fy = intrinsic.get_focal_length()
        cx, cy = intrinsic.get_principal_point()
        print(f"Open3D {o3d.__version__}: intrinsics {intrinsic.width}x{intrinsic.height} "
              f"fx {fx:.6f} fy {fy:.6f} cx {cx:.6f} cy {cy:.6f}")
        print(f"create_from_depth_image: {len(expected)} points; "
              f"rgbd PLY via read_point_cloud: {len(got)} points "
              f"(colors: {cloud.has_colors()}, normals: {cloud.has_normals()})")
        if len(got) != len(expected):
            print("interop_open3d: MISMATCH in the number of points", file=sys.stderr)
            return 1
        err = float(np.abs(got - expected).max()) if len(got) else 0.0
        print(f"max abs difference {err * 1e3:.4f} mm (tolerance {TOLERANCE_M * 1e3:.4f} mm)")
        if not err <= TOLERANCE_M:
            print("interop_open3d: MISMATCH in the points", file=sys.stderr)
            return 1
        if not all(given):
            for alignment in ("depth", "color"):
                if not check_aligned_pair(o3d, np, args, alignment, out, Path(args.capture).stem, cloud):
                    return 1
        print("interop_open3d: OK, Open3D and rgbd agree")
        return 0


def check_aligned_pair(o3d, np, args, alignment, out, stem, cloud):
    """`rgbd rectify --align-to ALIGNMENT` through create_from_color_and_depth and
    create_from_rgbd_image; `cloud` is `rgbd cloud --keep-edges` read by Open3D."""
    pair = out / f"aligned-{alignment}"
    subprocess.run([args.rgbd, "rectify", args.capture, "-o", str(pair), "-q", "--align-to", alignment],
                   check=True)
    color = o3d.io.read_image(str(pair / f"{stem}.color.png"))
    depth = o3d.io.read_image(str(pair / f"{stem}.depth.png"))
    intrinsic = o3d.io.read_pinhole_camera_intrinsic(str(pair / f"{stem}.intrinsics.json"))
    rgbd = o3d.geometry.RGBDImage.create_from_color_and_depth(
        color, depth, depth_scale=1000.0, depth_trunc=math.inf, convert_rgb_to_intensity=False)
    pcd = o3d.geometry.PointCloud.create_from_rgbd_image(rgbd, intrinsic)
    points, colors = np.asarray(pcd.points), np.asarray(pcd.colors)
    millimeters = np.asarray(depth)
    print(f"--align-to {alignment}: {intrinsic.width}x{intrinsic.height}, "
          f"create_from_rgbd_image: {len(points)} points")
    if (np.asarray(color).shape[:2] != millimeters.shape
            or (intrinsic.height, intrinsic.width) != millimeters.shape):
        print(f"interop_open3d: --align-to {alignment}: color, depth and intrinsics differ in size",
              file=sys.stderr)
        return False
    if alignment == "depth":
        expected, expected_colors = np.asarray(cloud.points), np.asarray(cloud.colors)
    else:
        import tifffile  # only this check needs it (a test requirement)
        meters = tifffile.imread(pair / f"{stem}.depth.tiff")
        v, u = np.nonzero(millimeters > 0)
        z = meters[v, u].astype(np.float64)
        fx, fy = intrinsic.get_focal_length()
        cx, cy = intrinsic.get_principal_point()
        expected = np.stack([(u - cx) * z / fx, (v - cy) * z / fy, z], axis=1)
        expected_colors = np.asarray(color)[v, u] / 255.0
    if len(points) != len(expected):
        print(f"interop_open3d: --align-to {alignment}: {len(points)} points, expected {len(expected)}",
              file=sys.stderr)
        return False
    err = float(np.abs(points - expected).max()) if len(points) else 0.0
    color_err = float(np.abs(colors - expected_colors).max()) * 255 if len(points) else 0.0
    print(f"  max abs difference {err * 1e3:.4f} mm, colors {color_err:.3f} levels")
    if not (err <= TOLERANCE_M and color_err < 0.5):
        print(f"interop_open3d: --align-to {alignment}: MISMATCH", file=sys.stderr)
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
