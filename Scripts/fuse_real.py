#!/usr/bin/env python3
"""`rgbd fuse` at its defaults on a real scan against Open3D's mesh from the same frames, run
by Scripts/bench.sh (cases fuse-real-*; the scans are ../shared/data/scans/, not in the
repository).

Runs `rgbd fuse SCAN` with no option but those given after `--` (the voxel it chooses is read
from the PLY header's `comment voxel V m`), then Scripts/baseline_fuse.py (Open3D's
VoxelBlockGrid) on the same scan with its best options: confidence high only (where the scan
has confidence), depth up to --max-depth (4.5 m), at --open3d-voxel (default: the voxel rgbd
chose) and 4 voxels of truncation. Then the distances between the two surfaces, each
vertex of one to the nearest point of the other's triangles (Open3D's RaycastingScene):

- rgbd→Open3D: where rgbd puts surface; a high p90 means surfaces Open3D does not have;
- Open3D→rgbd: where Open3D has surface rgbd lacks or places elsewhere;
- two-sided: the median over both sets of distances.

Prints `timing NAME VALUE ms` lines on stderr (the harness's in-process metrics; the values
are millimeters and counts, not milliseconds): voxel_mm, rgbd_vertices, open3d_vertices,
rgbd_to_open3d_median_mm, rgbd_to_open3d_p90_mm, open3d_to_rgbd_median_mm,
open3d_to_rgbd_p90_mm, two_sided_median_mm, and a readable summary.
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np


def header_voxel(path):
    """The voxel (meters) in a PLY header's `comment voxel V m` line."""
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode("latin-1").strip()
            if line == "end_header":
                break
            match = re.match(r"comment voxel ([0-9.eE+-]+) m", line)
            if match:
                return float(match.group(1)), line[len("comment "):]
    sys.exit(f"{path}: no `comment voxel` line in its header")


def distances(points, mesh_path):
    """Distance of (N, 3) points to the triangles of the mesh at mesh_path."""
    import open3d as o3d
    mesh = o3d.t.io.read_triangle_mesh(mesh_path)
    scene = o3d.t.geometry.RaycastingScene()
    scene.add_triangles(mesh)
    return scene.compute_distance(o3d.core.Tensor(points.astype(np.float32))).numpy().astype(np.float64)


def vertices(path):
    from plyfile import PlyData
    v = PlyData.read(path)["vertex"]
    return np.stack([v["x"], v["y"], v["z"]], axis=1).astype(np.float64)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scan")
    parser.add_argument("--rgbd", required=True, help="the rgbd executable")
    parser.add_argument("--out", required=True, help="a scratch folder")
    parser.add_argument("--open3d-voxel", type=float, default=None, help="Open3D's voxel (default: rgbd's)")
    parser.add_argument("--max-depth", type=float, default=4.5, help="Open3D's depth range, meters")
    argv = sys.argv[1:]
    rgbd_options = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    scan = args.scan.rstrip("/")
    if not os.path.exists(scan):
        sys.exit(f"{scan}: missing (the real scans are in ../shared/data/scans)")
    os.makedirs(args.out, exist_ok=True)
    meshes = {"rgbd": os.path.join(args.out, "rgbd.ply"), "open3d": os.path.join(args.out, "open3d.ply")}
    run = subprocess.run([args.rgbd, "fuse", scan, "-o", meshes["rgbd"], *rgbd_options],
                         stderr=subprocess.PIPE, text=True)
    sys.stderr.write(run.stderr)
    if run.returncode != 0:
        sys.exit(f"rgbd fuse failed ({run.returncode})")
    voxel, said = header_voxel(meshes["rgbd"])
    o3d_voxel = args.open3d_voxel or voxel
    subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "baseline_fuse.py"),
                    scan, "-o", meshes["open3d"], "--voxel", str(o3d_voxel), "--max-depth", str(args.max_depth),
                    "--min-confidence", "2"], check=True)
    ours, theirs = vertices(meshes["rgbd"]), vertices(meshes["open3d"])
    to_o3d = distances(ours, meshes["open3d"])
    to_rgbd = distances(theirs, meshes["rgbd"])
    both = np.concatenate([to_o3d, to_rgbd])
    figures = {
        "voxel_mm": 1000 * voxel,
        "rgbd_vertices": len(ours),
        "open3d_vertices": len(theirs),
        "rgbd_to_open3d_median_mm": 1000 * np.median(to_o3d),
        "rgbd_to_open3d_p90_mm": 1000 * np.quantile(to_o3d, 0.9),
        "open3d_to_rgbd_median_mm": 1000 * np.median(to_rgbd),
        "open3d_to_rgbd_p90_mm": 1000 * np.quantile(to_rgbd, 0.9),
        "two_sided_median_mm": 1000 * np.median(both),
    }
    for name, value in figures.items():
        print(f"timing {name} {value:.4f} ms", file=sys.stderr)
    print(f"rgbd: {said}", file=sys.stderr)
    print(f"rgbd {len(ours)} vertices, Open3D {len(theirs)} (voxel {1000 * o3d_voxel:.1f} mm, confidence high, "
          f"depth ≤ {args.max_depth} m); rgbd→Open3D median {figures['rgbd_to_open3d_median_mm']:.2f} mm, "
          f"p90 {figures['rgbd_to_open3d_p90_mm']:.2f} mm; Open3D→rgbd median {figures['open3d_to_rgbd_median_mm']:.2f} mm, "
          f"p90 {figures['open3d_to_rgbd_p90_mm']:.2f} mm; two-sided median {figures['two_sided_median_mm']:.2f} mm",
          file=sys.stderr)


if __name__ == "__main__":
    main()
