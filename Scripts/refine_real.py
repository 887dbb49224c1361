#!/usr/bin/env python3
"""`rgbd refine` on a real scan: does each frame's depth lie on the fused surface at least as
well with the refined poses as with the recorded ones? Run by Scripts/bench.sh (case
refine-real; the scans are ../shared/data/scans/, not in the repository).

Runs `rgbd refine SCAN -o refined.txt` (plus the options given after `--`), `rgbd fuse SCAN
-o recorded.ply` (its automatic voxel, read from the PLY header's `comment voxel V m`) and
`rgbd fuse SCAN --poses refined.txt --voxel V -o refined.ply` (the same voxel). Then, for
every frame with depth, its depth points (every 4th pixel of each row and column; high
confidence only where the scan has confidence maps; Record3D exports have none) placed by
the recorded pose and by the refined one, and the median distance of each set to the
triangles of the mesh fused with the same poses (Open3D's RaycastingScene): each frame
against the fusion of its own poses. Also how far the refined camera centres moved from
the recorded ones (no alignment: both are in the scan's world, anchored by frame 0).

Reads a Stray Scanner folder (odometry.csv timestamps, c2w with OpenCV camera axes; depth
PNG in mm; confidence PNG) or a Record3D EXR + JPG export (metadata.json: frameTimestamps,
poses [qx qy qz qw x y z] c2w with OpenGL camera axes, turned to OpenCV's; depth/N.exr in
m); K scaled to the depth size as Scripts/baseline_fuse.py does. Refined poses are matched
to frames by time (seconds since the first frame with depth, within 0.5 ms), as rgbd's
--poses matches them.

Prints `timing NAME VALUE ms` lines on stderr (the harness's in-process metrics; the values
are millimeters and counts, not milliseconds): voxel_mm, frames, recorded_residual_mm,
refined_residual_mm (medians over frames of the per-frame medians), better_frames_pct
(frames whose median got smaller), move_median_mm, move_max_mm, and a readable summary.
"""

import argparse
import json
import os
import subprocess
import sys

import cv2
import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from baseline_fuse import read_exr  # noqa: E402
from baseline_refine import quaternion_matrix, read_odometry  # noqa: E402
from fuse_real import header_voxel  # noqa: E402
from refine_quality import read_tum  # noqa: E402


def depth_points(depth, k, confidence=None, step=4):
    """Camera-frame points of every step-th pixel with depth (and high confidence if given)."""
    d = depth[::step, ::step].astype(np.float64)
    v, u = np.mgrid[0:depth.shape[0]:step, 0:depth.shape[1]:step]
    keep = np.isfinite(d) & (d > 0)
    if confidence is not None:
        keep &= confidence[::step, ::step] >= 2
    z = d[keep]
    return np.stack([(u[keep] - k[0, 2]) / k[0, 0] * z, (v[keep] - k[1, 2]) / k[1, 1] * z, z], axis=1)


def frames(scan):
    """(seconds since the first frame with depth, recorded c2w pose, camera-frame points) per frame with depth."""
    out = []
    if os.path.exists(os.path.join(scan, "metadata.json")):
        meta = json.load(open(os.path.join(scan, "metadata.json")))
        K = np.array(meta["K"], dtype=np.float64).reshape(3, 3).T   # column-major, at the color size
        flip = np.diag([1.0, -1.0, -1.0, 1.0])                        # OpenGL camera axes to OpenCV's
        for n, q in enumerate(meta["poses"]):
            path = os.path.join(scan, "depth", f"{n}.exr")
            if not os.path.exists(path):
                continue
            channels = read_exr(path)
            depth = channels["R"] if "R" in channels else next(iter(channels.values()))
            h, w = depth.shape
            sx, sy = w / meta["w"], h / meta["h"]
            k = np.array([[K[0, 0] * sx, 0, K[0, 2] * sx], [0, K[1, 1] * sy, K[1, 2] * sy], [0, 0, 1]])
            pose = np.eye(4)
            pose[:3, :3] = quaternion_matrix(*q[:4])
            pose[:3, 3] = q[4:7]
            out.append((meta["frameTimestamps"][n], pose @ flip, depth_points(depth, k)))
    else:
        numbers, times, poses = read_odometry(os.path.join(scan, "odometry.csv"))
        K = np.loadtxt(os.path.join(scan, "camera_matrix.csv"), delimiter=",")
        video = os.path.join(scan, "rgb.mp4")
        width = height = 0
        if os.path.exists(video):
            capture = cv2.VideoCapture(video)
            width, height = int(capture.get(cv2.CAP_PROP_FRAME_WIDTH)), int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT))
        if not width:   # depth-only: K is for the iPhone's 1920x1440 (docs/scans.md)
            width, height = 16 * round(2 * K[0, 2] / 16), 16 * round(2 * K[1, 2] / 16)
        for frame, t, pose in zip(numbers, times, poses):
            path = os.path.join(scan, "depth", f"{frame:06d}.png")
            if not os.path.exists(path):
                continue
            depth = cv2.imread(path, cv2.IMREAD_UNCHANGED).astype(np.float64) / 1000
            confidence_path = os.path.join(scan, "confidence", f"{frame:06d}.png")
            confidence = cv2.imread(confidence_path, cv2.IMREAD_UNCHANGED) if os.path.exists(confidence_path) else None
            h, w = depth.shape
            sx, sy = w / width, h / height
            k = np.array([[K[0, 0] * sx, 0, K[0, 2] * sx], [0, K[1, 1] * sy, K[1, 2] * sy], [0, 0, 1]])
            out.append((t, pose, depth_points(depth, k, confidence)))
    t0 = out[0][0]
    return [(t - t0, pose, points) for t, pose, points in out]


def scene(mesh_path):
    import open3d as o3d
    raycasting = o3d.t.geometry.RaycastingScene()
    raycasting.add_triangles(o3d.t.io.read_triangle_mesh(mesh_path))
    return raycasting


def median_distance(raycasting, points, pose):
    import open3d as o3d
    world = points @ pose[:3, :3].T + pose[:3, 3]
    return float(np.median(raycasting.compute_distance(o3d.core.Tensor(world.astype(np.float32))).numpy()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scan")
    parser.add_argument("--rgbd", required=True, help="the rgbd executable")
    parser.add_argument("--out", required=True, help="a scratch folder")
    argv = sys.argv[1:]
    rgbd_options = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    scan = args.scan.rstrip("/")
    if not os.path.exists(scan):
        sys.exit(f"{scan}: missing (the real scans are in ../shared/data/scans)")
    os.makedirs(args.out, exist_ok=True)
    trajectory = os.path.join(args.out, "refined.txt")
    meshes = {"recorded": os.path.join(args.out, "recorded.ply"), "refined": os.path.join(args.out, "refined.ply")}

    def rgbd(*arguments):
        run = subprocess.run([args.rgbd, *arguments], stderr=subprocess.PIPE, text=True)
        sys.stderr.write(run.stderr)
        if run.returncode != 0:
            sys.exit(f"rgbd {arguments[0]} failed ({run.returncode})")

    rgbd("refine", scan, "-o", trajectory, *rgbd_options)
    rgbd("fuse", scan, "-o", meshes["recorded"], "-q")
    voxel, _ = header_voxel(meshes["recorded"])
    rgbd("fuse", scan, "--poses", trajectory, "--voxel", repr(voxel), "-o", meshes["refined"], "-q")

    seconds, refined = read_tum(trajectory)
    scenes = {name: scene(path) for name, path in meshes.items()}
    residual = {"recorded": [], "refined": []}
    moves = []
    for t, pose, points in frames(scan):
        j = int(np.argmin(np.abs(seconds - t)))
        if abs(seconds[j] - t) > 0.0005:
            sys.exit(f"{trajectory}: no pose at {t:.6f} s (a frame with depth)")
        if len(points) == 0:
            continue
        residual["recorded"].append(median_distance(scenes["recorded"], points, pose))
        residual["refined"].append(median_distance(scenes["refined"], points, refined[j]))
        moves.append(np.linalg.norm(refined[j][:3, 3] - pose[:3, 3]))
    before, after = np.array(residual["recorded"]), np.array(residual["refined"])
    figures = {
        "voxel_mm": 1000 * voxel,
        "frames": len(before),
        "recorded_residual_mm": 1000 * np.median(before),
        "refined_residual_mm": 1000 * np.median(after),
        "better_frames_pct": 100 * np.mean(after < before),
        "move_median_mm": 1000 * np.median(moves),
        "move_max_mm": 1000 * np.max(moves),
    }
    for name, value in figures.items():
        print(f"timing {name} {value:.4f} ms", file=sys.stderr)
    print(f"{scan}: {len(before)} frames, voxel {figures['voxel_mm']:.1f} mm; median residual of each frame's depth to "
          f"the mesh of its poses: recorded {figures['recorded_residual_mm']:.2f} mm, refined "
          f"{figures['refined_residual_mm']:.2f} mm ({figures['better_frames_pct']:.0f} % of frames closer); refined "
          f"camera centres moved by median {figures['move_median_mm']:.1f} mm, max {figures['move_max_mm']:.1f} mm",
          file=sys.stderr)


if __name__ == "__main__":
    main()
