#!/usr/bin/env python3
"""Baseline of `rgbd cloud SCAN`: the Python pipeline a Stray Scanner user writes today
(the way StrayVisualizer merges a scan), run by Scripts/bench.sh.

For every frame: the color frame from cv2.VideoCapture, resized to the depth size
(INTER_AREA: an average over each depth pixel's footprint, as rgbd colors points), the
16-bit millimeter depth PNG and the confidence PNG with cv2.imread, pixels of confidence
below --min-confidence dropped, back-projection with numpy through the depth intrinsics
(camera_matrix.csv scaled to the depth size), the odometry pose applied (c2w, OpenCV camera
axes, quaternion x y z w); then every frame's points concatenated and thinned with
Open3D's voxel_down_sample, written as binary PLY.

--read-only: only what reading takes (video frames decoded, depth, confidence, poses),
nothing computed: the reader baseline.

Prints `timing STAGE MS ms` lines on stderr with --stages (read, merge, thin, write).
"""

import argparse
import os
import sys
import time

import cv2
import numpy as np


def quaternion_matrix(qx, qy, qz, qw):
    """Rotation matrix of a Hamilton quaternion given by components."""
    x, y, z, w = qx, qy, qz, qw
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def read_odometry(path):
    """Frames and c2w poses of odometry.csv (header with named columns)."""
    with open(path) as f:
        header = [h.strip() for h in f.readline().split(",")]
        rows = [line.split(",") for line in f if line.strip()]
    col = {name: i for i, name in enumerate(header)}
    frames, poses = [], []
    for r in rows:
        frames.append(int(r[col["frame"]]))
        t = np.array([float(r[col[k]]) for k in ("x", "y", "z")])
        R = quaternion_matrix(*(float(r[col[k]]) for k in ("qx", "qy", "qz", "qw")))
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = R, t
        poses.append(pose)
    return frames, poses


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scan")
    parser.add_argument("-o", "--output", default=None)
    parser.add_argument("--voxel", type=float, default=0.01)
    parser.add_argument("--min-confidence", type=int, default=2)
    parser.add_argument("--read-only", action="store_true")
    parser.add_argument("--stages", action="store_true")
    args = parser.parse_args()

    t0 = time.perf_counter()
    frames, poses = read_odometry(os.path.join(args.scan, "odometry.csv"))
    K = np.loadtxt(os.path.join(args.scan, "camera_matrix.csv"), delimiter=",")
    video = cv2.VideoCapture(os.path.join(args.scan, "rgb.mp4"))
    points, colors = [], []
    grid = None
    read_seconds = 0.0
    for frame, pose in zip(frames, poses):
        r0 = time.perf_counter()
        ok, bgr = video.read()
        if not ok:
            sys.exit(f"{args.scan}/rgb.mp4 ends before frame {frame}")
        depth_path = os.path.join(args.scan, "depth", f"{frame:06d}.png")
        if not os.path.exists(depth_path):
            continue
        depth_mm = cv2.imread(depth_path, cv2.IMREAD_UNCHANGED)
        confidence = cv2.imread(os.path.join(args.scan, "confidence", f"{frame:06d}.png"), cv2.IMREAD_UNCHANGED)
        read_seconds += time.perf_counter() - r0
        if args.read_only:
            continue
        h, w = depth_mm.shape
        if grid is None:
            sx, sy = w / bgr.shape[1], h / bgr.shape[0]
            fx, fy, cx, cy = K[0, 0] * sx, K[1, 1] * sy, K[0, 2] * sx, K[1, 2] * sy
            u, v = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
            grid = ((u - cx) / fx, (v - cy) / fy)
        rgb = cv2.cvtColor(cv2.resize(bgr, (w, h), interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2RGB)
        z = depth_mm.astype(np.float32) / 1000.0
        keep = (depth_mm > 0) & (confidence >= args.min_confidence)
        zk = z[keep]
        camera = np.stack([grid[0][keep] * zk, grid[1][keep] * zk, zk], axis=1)
        world = camera @ pose[:3, :3].T.astype(np.float32) + pose[:3, 3].astype(np.float32)
        points.append(world)
        colors.append(rgb[keep])
    t1 = time.perf_counter()
    if args.read_only:
        if args.stages:
            print(f"timing read {1000 * (t1 - t0):.1f} ms", file=sys.stderr)
        return

    import open3d as o3d

    cloud = o3d.geometry.PointCloud()
    cloud.points = o3d.utility.Vector3dVector(np.concatenate(points).astype(np.float64))
    cloud.colors = o3d.utility.Vector3dVector(np.concatenate(colors).astype(np.float64) / 255.0)
    del points, colors
    t2 = time.perf_counter()
    thinned = cloud.voxel_down_sample(args.voxel)
    t3 = time.perf_counter()
    o3d.io.write_point_cloud(args.output, thinned, write_ascii=False)
    t4 = time.perf_counter()
    if args.stages:
        print(f"timing read {1000 * read_seconds:.1f} ms", file=sys.stderr)
        print(f"timing merge {1000 * (t2 - t0 - read_seconds):.1f} ms", file=sys.stderr)
        print(f"timing thin {1000 * (t3 - t2):.1f} ms", file=sys.stderr)
        print(f"timing write {1000 * (t4 - t3):.1f} ms", file=sys.stderr)


if __name__ == "__main__":
    main()
