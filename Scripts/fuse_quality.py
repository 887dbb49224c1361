#!/usr/bin/env python3
"""Quality of fused meshes against a synthetic scan's ground truth (`rgbd-synth scan` writes
NAME.truth.json beside the scan), run by Scripts/bench.sh.

Runs `rgbd fuse SCAN --voxel V` at its other defaults (plus the options given after `--`:
`-- --min-confidence 2 --max-depth 4.5` gives it Open3D's exact inputs) and
Scripts/baseline_fuse.py (Open3D's VoxelBlockGrid) with the same voxel and truncation (4
voxels) and its best options, --min-confidence (default 2: high only) and --max-depth
(default 4.5 m) (untimed: the speed cases time them), then for each mesh:

- accuracy: the median distance of its vertices to the room's true surfaces (floor,
  ceiling, walls, boxes with their yaw; exact distances, in the scan's world);
- completeness: the share of the true visible surface within 2 voxels of the mesh. The
  visible surface is sampled by casting exact rays through every 4th depth pixel of every
  10th frame (true poses and depth camera from the truth), kept where the true depth is
  within --max-depth and ARKit's confidence range (4 m).

Prints `timing NAME VALUE ms` lines on stderr (the harness's in-process metrics; the values
are millimeters and percent, not milliseconds): rgbd_median_mm, open3d_median_mm,
rgbd_completeness_pct, open3d_completeness_pct, and a readable summary.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

# The room's exact surfaces: the tests' helper (Tests/python/synthetic_room.py), shared.
sys.dont_write_bytecode = True  # importing it must not leave Tests/python/__pycache__
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Tests" / "python"))
from synthetic_room import room_distance  # noqa: E402


def cast(origins, directions, truth):
    """Ray parameter of the first hit of rays (room coordinates) with the room and its boxes."""
    room = truth["room"]
    lo, hi = np.array(room["min_corner"]), np.array(room["max_corner"])
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(directions > 0, hi, lo)
        t_exit = np.where(directions != 0, (bound - origins) / directions, np.inf)
        best = np.where(t_exit > 0, t_exit, np.inf).min(axis=1)
        for box in room["boxes"]:
            c, s = np.cos(box["yaw"]), np.sin(box["yaw"])
            def local(v):
                return np.stack([c * v[:, 0] - s * v[:, 2], v[:, 1], s * v[:, 0] + c * v[:, 2]], axis=1)
            o, d = local(origins - np.array(box["center"])), local(directions)
            half = np.array(box["half_size"])
            t0, t1 = (-half - o) / d, (half - o) / d
            near = np.nanmax(np.minimum(t0, t1), axis=1)
            far = np.nanmin(np.maximum(t0, t1), axis=1)
            hit = (near <= far) & (near > 0) & (near < best)
            best = np.where(hit, near, best)
    return best


def visible_surface(truth, max_depth):
    """True surface points (layout world) seen by every 4th pixel of every 10th frame."""
    k = truth["depth_camera"]
    u, v = np.meshgrid(np.arange(0, k["width"], 4, dtype=np.float64), np.arange(0, k["height"], 4, dtype=np.float64))
    rays = np.stack([(u.ravel() - k["cx"]) / k["fx"], (v.ravel() - k["cy"]) / k["fy"], np.ones(u.size)], axis=1)
    w = np.array(truth["world_from_room"], dtype=np.float64)
    points = []
    for frame in truth["frames"][::10]:
        pose = np.array(frame["camera_to_world"])   # layout world
        room_pose = np.linalg.inv(w) @ pose
        origins = np.repeat(room_pose[None, :3, 3], len(rays), axis=0)
        directions = rays @ room_pose[:3, :3].T
        depth = cast(origins, directions, truth)   # rays have camera z = 1: t is the depth
        keep = np.isfinite(depth) & (depth <= min(max_depth, 4.0))
        camera = rays[keep] * depth[keep, None]
        points.append(camera @ pose[:3, :3].T + pose[:3, 3])
    return np.concatenate(points)


def read_vertices(path):
    from plyfile import PlyData
    vertex = PlyData.read(path)["vertex"]
    return np.stack([vertex["x"], vertex["y"], vertex["z"]], axis=1).astype(np.float64)


def nearest_distance(queries, points):
    from scipy.spatial import cKDTree
    return cKDTree(points).query(queries, workers=-1)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scan")
    parser.add_argument("--rgbd", required=True, help="the rgbd executable")
    parser.add_argument("--out", required=True, help="a scratch folder")
    parser.add_argument("--voxel", type=float, default=0.01)
    parser.add_argument("--max-depth", type=float, default=4.5, help="Open3D's depth range, meters")
    parser.add_argument("--min-confidence", type=int, default=2, help="Open3D's lowest confidence")
    parser.add_argument("--method", default="tensor")
    argv = sys.argv[1:]
    rgbd_options = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    scan = args.scan.rstrip("/")
    truth = json.load(open(scan + ".truth.json"))
    os.makedirs(args.out, exist_ok=True)
    meshes = {"rgbd": os.path.join(args.out, "rgbd.ply"), "open3d": os.path.join(args.out, "open3d.ply")}
    subprocess.run([args.rgbd, "fuse", scan, "-o", meshes["rgbd"], "--voxel", str(args.voxel), "-q", *rgbd_options],
                   check=True)
    subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "baseline_fuse.py"),
                    scan, "-o", meshes["open3d"], "--voxel", str(args.voxel), "--max-depth", str(args.max_depth),
                    "--min-confidence", str(args.min_confidence), "--method", args.method], check=True)
    surface = visible_surface(truth, args.max_depth)
    for name, path in meshes.items():
        vertices = read_vertices(path)
        accuracy = room_distance(vertices, truth)
        completeness = float(np.mean(nearest_distance(surface, vertices) <= 2 * args.voxel))
        median_mm = 1000 * float(np.median(accuracy))
        print(f"timing {name}_median_mm {median_mm:.4f} ms", file=sys.stderr)
        print(f"timing {name}_completeness_pct {100 * completeness:.3f} ms", file=sys.stderr)
        print(f"{name}: {len(vertices)} vertices, median distance {median_mm:.3f} mm, "
              f"90 % within {1000 * float(np.quantile(accuracy, 0.9)):.2f} mm, "
              f"completeness {100 * completeness:.2f} % of {len(surface)} true surface samples", file=sys.stderr)


if __name__ == "__main__":
    main()
