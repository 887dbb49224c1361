#!/usr/bin/env python3
"""Baseline of `rgbd fuse SCAN`: Open3D's TSDF integration of a Stray Scanner scan, as
StrayVisualizer and Open3D's reconstruction system do it, run by Scripts/bench.sh.

For every (--every N-th) frame: the color frame from cv2.VideoCapture, resized to the depth
size (INTER_AREA: the footprint average rgbd colors with), the 16-bit millimeter depth PNG
and the confidence PNG (cv2.imread), depth of confidence below --min-confidence and beyond
--max-depth set to 0 (no depth), the odometry pose (c2w, OpenCV camera axes, quaternion
x y z w) inverted to Open3D's extrinsic; integrated with the same voxel, truncation
(--trunc, default 4 voxels) and depth range as rgbd fuse, then the triangle mesh extracted
and written as binary PLY.

--method tensor: `open3d.t.geometry.VoxelBlockGrid` on the CPU (float tsdf, weight and
color, 16³ blocks, a hash map of 4000 blocks to start with, grown as needed); --method legacy: `open3d.pipelines.integration.ScalableTSDFVolume`
(RGB8 color). Open3D 0.19 (0.20's legacy volume extracts nothing on this machine).

Prints `timing STAGE MS ms` lines on stderr with --stages (read, integrate, extract, write).
"""

import argparse
import os
import sys
import time

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from baseline_scan_cloud import read_odometry  # noqa: E402


def frames(scan, every, min_confidence, max_depth):
    """(rgb at the depth size, depth mm with filtered pixels 0, 3x3 depth K, c2w pose) per used frame."""
    numbers, poses = read_odometry(os.path.join(scan, "odometry.csv"))
    K = np.loadtxt(os.path.join(scan, "camera_matrix.csv"), delimiter=",")
    video = cv2.VideoCapture(os.path.join(scan, "rgb.mp4"))
    for n, (frame, pose) in enumerate(zip(numbers, poses)):
        ok, bgr = video.read()
        if not ok:
            sys.exit(f"{scan}/rgb.mp4 ends before frame {frame}")
        depth_path = os.path.join(scan, "depth", f"{frame:06d}.png")
        if n % every or not os.path.exists(depth_path):
            continue
        depth = cv2.imread(depth_path, cv2.IMREAD_UNCHANGED)
        confidence = cv2.imread(os.path.join(scan, "confidence", f"{frame:06d}.png"), cv2.IMREAD_UNCHANGED)
        h, w = depth.shape
        sx, sy = w / bgr.shape[1], h / bgr.shape[0]
        k = np.array([[K[0, 0] * sx, 0, K[0, 2] * sx], [0, K[1, 1] * sy, K[1, 2] * sy], [0, 0, 1]])
        depth[(confidence < min_confidence) | (depth > max_depth * 1000)] = 0
        rgb = cv2.cvtColor(cv2.resize(bgr, (w, h), interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2RGB)
        yield rgb, depth, k, pose


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scan")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--voxel", type=float, default=0.01)
    parser.add_argument("--trunc", type=float, default=None)
    parser.add_argument("--max-depth", type=float, default=5.0)
    parser.add_argument("--min-confidence", type=int, default=1)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--method", choices=("tensor", "legacy"), default="tensor")
    parser.add_argument("--stages", action="store_true")
    args = parser.parse_args()
    trunc = args.trunc if args.trunc is not None else 4 * args.voxel

    import open3d as o3d

    t0 = time.perf_counter()
    read_s = integrate_s = 0.0
    if args.method == "tensor":
        device = o3d.core.Device("CPU:0")
        grid = o3d.t.geometry.VoxelBlockGrid(
            attr_names=("tsdf", "weight", "color"),
            attr_dtypes=(o3d.core.float32, o3d.core.float32, o3d.core.float32),
            attr_channels=((1), (1), (3)), voxel_size=args.voxel, block_resolution=16, block_count=4000,
            device=device)
    else:
        volume = o3d.pipelines.integration.ScalableTSDFVolume(
            voxel_length=args.voxel, sdf_trunc=trunc, color_type=o3d.pipelines.integration.TSDFVolumeColorType.RGB8)
    r0 = time.perf_counter()
    for rgb, depth, k, pose in frames(args.scan, args.every, args.min_confidence, args.max_depth):
        r1 = time.perf_counter()
        read_s += r1 - r0
        extrinsic = np.linalg.inv(pose)
        h, w = depth.shape
        if args.method == "tensor":
            depth_t = o3d.t.geometry.Image(np.ascontiguousarray(depth)).to(device)
            color_t = o3d.t.geometry.Image(np.ascontiguousarray(rgb)).to(device)
            k_t = o3d.core.Tensor(k, o3d.core.Dtype.Float64)
            e_t = o3d.core.Tensor(extrinsic, o3d.core.Dtype.Float64)
            blocks = grid.compute_unique_block_coordinates(depth_t, k_t, e_t, 1000.0, args.max_depth, trunc / args.voxel)
            grid.integrate(blocks, depth_t, color_t, k_t, e_t, 1000.0, args.max_depth, trunc / args.voxel)
        else:
            image = o3d.geometry.RGBDImage.create_from_color_and_depth(
                o3d.geometry.Image(np.ascontiguousarray(rgb)), o3d.geometry.Image(np.ascontiguousarray(depth)),
                depth_scale=1000.0, depth_trunc=args.max_depth, convert_rgb_to_intensity=False)
            intrinsic = o3d.camera.PinholeCameraIntrinsic(w, h, k[0, 0], k[1, 1], k[0, 2], k[1, 2])
            volume.integrate(image, intrinsic, extrinsic)
        r0 = time.perf_counter()
        integrate_s += r0 - r1
    t1 = time.perf_counter()
    if args.method == "tensor":
        mesh = grid.extract_triangle_mesh().to_legacy()
    else:
        mesh = volume.extract_triangle_mesh()
    mesh.compute_vertex_normals()
    t2 = time.perf_counter()
    o3d.io.write_triangle_mesh(args.output, mesh, write_ascii=False)
    t3 = time.perf_counter()
    if args.stages:
        print(f"timing read {1000 * read_s:.1f} ms", file=sys.stderr)
        print(f"timing integrate {1000 * integrate_s:.1f} ms", file=sys.stderr)
        print(f"timing extract {1000 * (t2 - t1):.1f} ms", file=sys.stderr)
        print(f"timing write {1000 * (t3 - t2):.1f} ms", file=sys.stderr)
    print(f"{args.output}: {len(mesh.vertices)} vertices, {len(mesh.triangles)} triangles "
          f"({1000 * (t1 - t0):.0f} ms integrating)", file=sys.stderr)


if __name__ == "__main__":
    main()
