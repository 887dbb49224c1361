#!/usr/bin/env python3
"""Baseline of `rgbd fuse SCAN`: Open3D's TSDF integration of a Stray Scanner scan, as
StrayVisualizer and Open3D's reconstruction system do it, run by Scripts/bench.sh.

Also reads the two real layouts of ../shared/data/scans: a Stray Scanner folder without its
video (depth-only: gray colors; K taken for the color size twice its principal point,
rounded to 16 px, 1920x1440), and a Record3D EXR + JPG export (metadata.json: K
column-major at the color size, poses [qx qy qz qw x y z] c2w with OpenGL camera axes,
turned to OpenCV's; depth/N.exr read by the small OpenEXR reader below, rgb/N.jpg; no
confidence, so every depth counts).

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
from baseline_scan_cloud import quaternion_matrix, read_odometry  # noqa: E402


def read_exr(path):
    """The channels of a scanline OpenEXR file without or with ZIP compression (half, float
    or uint pixels) as float32 (h, w) arrays, by name: Record3D's depth/N.exr."""
    import struct
    import zlib
    b = open(path, "rb").read()
    if b[:4] != b"\x76\x2f\x31\x01":
        sys.exit(f"{path}: not an OpenEXR file")
    o, attrs = 8, {}
    while b[o] != 0:
        e = b.index(b"\0", o); name = b[o:e].decode(); o = e + 1
        e = b.index(b"\0", o); o = e + 1
        size, = struct.unpack_from("<i", b, o); o += 4
        attrs[name] = b[o:o + size]; o += size
    o += 1
    chlist, channels, p = attrs["channels"], [], 0
    while chlist[p] != 0:
        e = chlist.index(b"\0", p); name = chlist[p:e].decode(); p = e + 1
        channels.append((name, struct.unpack_from("<i", chlist, p)[0])); p += 16
    x0, y0, x1, y1 = struct.unpack("<4i", attrs["dataWindow"])
    w, h = x1 - x0 + 1, y1 - y0 + 1
    compression = attrs["compression"][0]
    if compression not in (0, 2, 3):
        sys.exit(f"{path}: OpenEXR compression {compression} is not read here (none, ZIPS, ZIP only)")
    lines = 16 if compression == 3 else 1
    sizes, types = {0: 4, 1: 2, 2: 4}, {0: "<u4", 1: "<f2", 2: "<f4"}
    out = {name: np.zeros((h, w), np.float32) for name, _ in channels}
    for offset in struct.unpack_from(f"<{(h + lines - 1) // lines}Q", b, o):
        y, n = struct.unpack_from("<ii", b, offset)
        data = b[offset + 8:offset + 8 + n]
        rows = min(lines, y1 - y + 1)
        if compression and n < rows * w * sum(sizes[t] for _, t in channels):
            # zlib, then OpenEXR's predictor (byte differences + 128) and its split of even and odd bytes.
            t = ((np.cumsum(np.frombuffer(zlib.decompress(data), np.uint8).astype(np.int64) - 128) + 128) & 255).astype(np.uint8)
            half = (len(t) + 1) // 2
            raw = np.empty(len(t), np.uint8)
            raw[0::2], raw[1::2] = t[:half], t[half:]
            data = raw.tobytes()
        q = 0
        for r in range(rows):
            for name, t in channels:
                k = w * sizes[t]
                out[name][y - y0 + r] = np.frombuffer(data[q:q + k], types[t]).astype(np.float32)
                q += k
    return out


def record3d_export_frames(scan, every, max_depth):
    """A Record3D EXR + JPG export's frames, as frames() gives them (depth in 0.1 mm units)."""
    import json
    meta = json.load(open(os.path.join(scan, "metadata.json")))
    K = np.array(meta["K"], dtype=np.float64).reshape(3, 3).T   # column-major
    flip = np.diag([1.0, -1.0, -1.0, 1.0])                        # OpenGL camera axes to OpenCV's
    for n, q in enumerate(meta["poses"]):
        depth_path = os.path.join(scan, "depth", f"{n}.exr")
        if n % every or not os.path.exists(depth_path):
            continue
        channels = read_exr(depth_path)
        depth = channels["R"] if "R" in channels else next(iter(channels.values()))
        # 16-bit tenths of a millimeter (Open3D's VoxelBlockGrid takes uint16 depth with uint8 color).
        keep = np.isfinite(depth) & (depth > 0) & (depth <= min(max_depth, 6.5))
        depth = np.where(keep, np.round(depth * 10000), 0).astype(np.uint16)
        h, w = depth.shape
        bgr = cv2.imread(os.path.join(scan, "rgb", f"{n}.jpg"))
        sx, sy = w / meta["w"], h / meta["h"]
        k = np.array([[K[0, 0] * sx, 0, K[0, 2] * sx], [0, K[1, 1] * sy, K[1, 2] * sy], [0, 0, 1]])
        pose = np.eye(4)
        pose[:3, :3] = quaternion_matrix(*q[:4])
        pose[:3, 3] = q[4:7]
        rgb = np.full((h, w, 3), 128, np.uint8) if bgr is None else \
            cv2.cvtColor(cv2.resize(bgr, (w, h), interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2RGB)
        yield rgb, depth, k, pose @ flip, 10000.0


def frames(scan, every, min_confidence, max_depth):
    """(rgb at the depth size, uint16 depth with filtered pixels 0, 3x3 depth K, c2w pose, depth units per
    meter) per used frame."""
    if os.path.exists(os.path.join(scan, "metadata.json")):
        yield from record3d_export_frames(scan, every, max_depth)
        return
    numbers, poses = read_odometry(os.path.join(scan, "odometry.csv"))
    K = np.loadtxt(os.path.join(scan, "camera_matrix.csv"), delimiter=",")
    has_video = os.path.exists(os.path.join(scan, "rgb.mp4"))
    video = cv2.VideoCapture(os.path.join(scan, "rgb.mp4")) if has_video else None
    # Depth-only: K is for 1920x1440 (twice the principal point, to 16 px), colors gray.
    color_size = (16 * round(2 * K[1, 2] / 16), 16 * round(2 * K[0, 2] / 16))
    for n, (frame, pose) in enumerate(zip(numbers, poses)):
        if video is not None:
            ok, bgr = video.read()
            if not ok:
                sys.exit(f"{scan}/rgb.mp4 ends before frame {frame}")
        else:
            bgr = None
        depth_path = os.path.join(scan, "depth", f"{frame:06d}.png")
        if n % every or not os.path.exists(depth_path):
            continue
        depth = cv2.imread(depth_path, cv2.IMREAD_UNCHANGED)
        confidence = cv2.imread(os.path.join(scan, "confidence", f"{frame:06d}.png"), cv2.IMREAD_UNCHANGED)
        h, w = depth.shape
        if bgr is None:
            bgr = np.full(color_size + (3,), 128, np.uint8)
        sx, sy = w / bgr.shape[1], h / bgr.shape[0]
        k = np.array([[K[0, 0] * sx, 0, K[0, 2] * sx], [0, K[1, 1] * sy, K[1, 2] * sy], [0, 0, 1]])
        # A frame without its confidence map uses all its depth (as rgbd does).
        low = np.zeros(depth.shape, bool) if confidence is None else confidence < min_confidence
        depth[low | (depth > max_depth * 1000)] = 0
        rgb = cv2.cvtColor(cv2.resize(bgr, (w, h), interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2RGB)
        yield rgb, depth, k, pose, 1000.0


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
    for rgb, depth, k, pose, scale in frames(args.scan, args.every, args.min_confidence, args.max_depth):
        r1 = time.perf_counter()
        read_s += r1 - r0
        extrinsic = np.linalg.inv(pose)
        h, w = depth.shape
        if args.method == "tensor":
            depth_t = o3d.t.geometry.Image(np.ascontiguousarray(depth)).to(device)
            color_t = o3d.t.geometry.Image(np.ascontiguousarray(rgb)).to(device)
            k_t = o3d.core.Tensor(k, o3d.core.Dtype.Float64)
            e_t = o3d.core.Tensor(extrinsic, o3d.core.Dtype.Float64)
            blocks = grid.compute_unique_block_coordinates(depth_t, k_t, e_t, scale, args.max_depth, trunc / args.voxel)
            grid.integrate(blocks, depth_t, color_t, k_t, e_t, scale, args.max_depth, trunc / args.voxel)
        else:
            image = o3d.geometry.RGBDImage.create_from_color_and_depth(
                o3d.geometry.Image(np.ascontiguousarray(rgb)), o3d.geometry.Image(np.ascontiguousarray(depth)),
                depth_scale=scale, depth_trunc=args.max_depth, convert_rgb_to_intensity=False)
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
