#!/usr/bin/env python3
"""Build an Open3D point cloud from a capture (with normals) and write it / show it.

    python3 Examples/python/export_open3d.py [CAPTURE.json] [-o CLOUD.ply] [--show]
                                             [--max-depth M] [--stride N] [--voxel SIZE]

CAPTURE.json defaults to the repository's Examples/sample/shot.json; the cloud is written to
CAPTURE.open3d.ply in the current directory unless -o says otherwise (any format Open3D
writes: .ply, .pcd, .xyz...). --show opens Open3D's viewer. Points come from
cap.point_cloud(normals=True): meters in the OpenCV camera frame, colors from the rectified
photo, normals toward the camera; Open3D's own create_from_rgbd_image would give the same
points from the rectified images and intrinsics (see Tests/python/test_cloud_interop.py).

Needs open3d (`python3 -m pip install open3d`); without it this prints how to install it
and exits 0 (cap.write_ply writes the same PLY without Open3D).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import List, Optional

import numpy as np

import rgbd

SAMPLE = Path(__file__).resolve().parents[1] / "sample" / "shot.json"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("capture", nargs="?", type=Path, default=SAMPLE, help="capture JSON (default: the sample)")
    parser.add_argument("-o", "--output", type=Path, help="file to write (default CAPTURE.open3d.ply)")
    parser.add_argument("--show", action="store_true", help="open Open3D's viewer")
    parser.add_argument("--max-depth", type=float, default=math.inf, help="drop points farther (meters)")
    parser.add_argument("--stride", type=int, default=1, help="keep every N-th depth pixel")
    parser.add_argument("--voxel", type=float, default=0.0, help="voxel size for down-sampling (meters, 0 = off)")
    args = parser.parse_args(argv)

    try:
        import open3d as o3d
    except ImportError:
        print("open3d is not installed: python3 -m pip install open3d\n"
              "(without it, rgbd.load_capture(...).write_ply('cloud.ply', normals=True) writes the same PLY)")
        return 0

    with rgbd.load_capture(args.capture) as cap:
        points, colors, normals = cap.point_cloud(max_depth=args.max_depth, stride=args.stride, normals=True)
        k = cap.intrinsics.depth

    cloud = o3d.geometry.PointCloud()
    cloud.points = o3d.utility.Vector3dVector(points.astype(np.float64))
    cloud.colors = o3d.utility.Vector3dVector(colors.astype(np.float64) / 255.0)
    cloud.normals = o3d.utility.Vector3dVector(normals.astype(np.float64))
    if args.voxel > 0:
        cloud = cloud.voxel_down_sample(args.voxel)
    print(f"{len(cloud.points)} points; depth intrinsics {k.width}×{k.height} fx={k.fx:.2f} fy={k.fy:.2f} "
          f"cx={k.cx:.2f} cy={k.cy:.2f}")

    output = args.output or Path(f"{args.capture.stem}.open3d.ply")
    if not o3d.io.write_point_cloud(str(output), cloud):
        print(f"Open3D could not write {output}", file=sys.stderr)
        return 1
    print(f"wrote {output}")
    if args.show:
        # Open3D's viewer looks down -Z with Y up: flip the OpenCV frame for a natural view.
        view = o3d.geometry.PointCloud(cloud)
        view.transform(np.diag([1.0, -1.0, -1.0, 1.0]))
        o3d.visualization.draw_geometries([view], window_name=f"rgbd: {args.capture.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
