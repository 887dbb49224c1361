#!/usr/bin/env python3
"""Optional interop check of `rgbd export --format nerfstudio` against nerfstudio itself
(not run by the tests: nerfstudio needs torch, a multi-gigabyte install).

    python3 Scripts/interop_nerfstudio.py [--rgbd BIN] [--layout stray|r3d] [--depth-size sensor|image]
                                          [--keep DIR]

Makes a synthetic scan with rgbd-synth (beside the rgbd binary) and its truth points (for
every frame, points on the true surfaces that frame sees), exports it with
`rgbd export --format nerfstudio`, and loads the folder with nerfstudio's own
`NerfstudioDataParser` (all frames, its default orientation, centring and scaling, which
honour `orientation_override` and `applied_transform`). Then, with nerfstudio's objects:

- the cameras: one per frame, the exported sizes and intrinsics, images of those sizes;
- the poses and pixel convention: each true point, taken into nerfstudio's world (the
  dataparser's transform, which nerfstudio composes with the file's `applied_transform`,
  and its scale), must lie on the
  ray nerfstudio's `Cameras.generate_rays` casts through the pixel coordinates where the
  exported camera and pose put it (nerfstudio's convention, pixel centres at i + 0.5):
  the angle between ray and point is at most 0.05 pixel's worth;
- the depth: nerfstudio's `get_depth_image_from_path` (the depth image resized to the image
  with nearest neighbours, scaled by `depth_unit_scale_factor` and the dataparser's scale)
  at the pixel of each true point gives the point's depth: median error at most 4 mm
  (unscaled; the depth map has 2.5 times fewer pixels across than the 640x480 images, and
  on oblique surfaces the nearest resize's half footprint is a few millimetres).

Exits 1 on a mismatch; without nerfstudio it prints how to install it and exits 0.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rgbd", default=os.environ.get("RGBD_BIN", str(REPO / ".build/release/rgbd")))
    ap.add_argument("--layout", choices=["stray", "r3d"], default="stray",
                    help="the synthetic scan's layout (stray: gravity-aligned, turned to +z up)")
    ap.add_argument("--depth-size", choices=["sensor", "image"], default="sensor",
                    help="rgbd export's --depth-size (sensor: the depth map's size, the default)")
    ap.add_argument("--keep", metavar="DIR", help="make the scan and the export here (kept)")
    args = ap.parse_args()

    try:
        import numpy as np
        import torch
        from PIL import Image
        from nerfstudio.data.dataparsers.nerfstudio_dataparser import NerfstudioDataParserConfig
        from nerfstudio.data.utils.data_utils import get_depth_image_from_path
    except ImportError as err:
        print(f"interop_nerfstudio: nerfstudio is not importable ({err}).\n"
              "Install it to run this check:  python3 -m pip install nerfstudio\n"
              "(torch and its dependencies: several GB.) Skipping: Tests/python/test_export.py\n"
              "checks the same conventions with a reader written from nerfstudio's documentation.")
        return 0

    synth = Path(args.rgbd).with_name("rgbd-synth")
    with tempfile.TemporaryDirectory(prefix="rgbd-ns-") as tmp:
        work = Path(args.keep) if args.keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(synth), "scan", "--layout", args.layout, "--frames", "8", "--size", "640x480",
                        "--truth-points", "3000", "-o", str(work), "--name", "scan"], check=True, capture_output=True)
        scan = work / ("scan.r3d" if args.layout == "r3d" else "scan")
        out = work / "nerfstudio"
        subprocess.run([args.rgbd, "export", str(scan), "--format", "nerfstudio", "--depth-size", args.depth_size,
                        "-o", str(out), "--overwrite", "-q"],
                       check=True)
        meta = json.loads((out / "transforms.json").read_text())
        table = np.loadtxt(work / "scan.points.csv", delimiter=",", skiprows=1)

        parser = NerfstudioDataParserConfig(data=out, eval_mode="all").setup()
        outputs = parser.get_dataparser_outputs(split="train")
        cameras = outputs.cameras
        failures = []
        if len(cameras) != len(meta["frames"]):
            failures.append(f"{len(cameras)} cameras for {len(meta['frames'])} frames")
        # nerfstudio's world: its dataparser_transform (3x4), times its scale, applied to the
        # *original* world: nerfstudio composes its own orientation and centring with the
        # file's applied_transform, so the scan's world goes straight through it.
        ns_from_scan = np.eye(4)
        ns_from_scan[:3, :] = outputs.dataparser_transform.numpy()
        scale = float(outputs.dataparser_scale)
        file_from_scan = np.eye(4)
        if "applied_transform" in meta:
            file_from_scan[:3, :] = np.array(meta["applied_transform"])
        depth_scale = outputs.metadata.get("depth_unit_scale_factor", 1e-3)
        depth_files = outputs.metadata.get("depth_filenames")
        if not depth_files or len(depth_files) != len(cameras):
            failures.append("nerfstudio found no depth images for every frame")
        angles, depth_errors = [], []
        names = [Path(p).name for p in outputs.image_filenames]
        for frame in meta["frames"]:
            index = names.index(Path(frame["file_path"]).name)
            k = {key: frame.get(key, meta.get(key)) for key in ["fl_x", "fl_y", "cx", "cy", "w", "h"]}
            camera = cameras[index]
            got = [float(camera.fx), float(camera.fy), float(camera.cx), float(camera.cy),
                   int(camera.width), int(camera.height)]
            want = [k["fl_x"], k["fl_y"], k["cx"], k["cy"], k["w"], k["h"]]
            if not np.allclose(got, want, atol=1e-4):
                failures.append(f"{frame['file_path']}: nerfstudio's camera {got}, exported {want}")
            with Image.open(outputs.image_filenames[index]) as image:
                if image.size != (k["w"], k["h"]):
                    failures.append(f"{frame['file_path']}: the image is {image.size}, the camera {k['w']}x{k['h']}")
            rows = table[table[:, 0] == frame["rgbd_frame"]]
            points = rows[:, 1:4]
            # Where the exported camera and pose put each point (nerfstudio's pixel convention).
            c2w = np.array(frame["transform_matrix"]) @ np.diag([1, -1, -1, 1])   # OpenGL -> OpenCV axes
            w2c = np.linalg.inv(c2w)
            in_file = points @ file_from_scan[:3, :3].T + file_from_scan[:3, 3]
            cam = in_file @ w2c[:3, :3].T + w2c[:3, 3]
            u = k["fl_x"] * cam[:, 0] / cam[:, 2] + k["cx"]
            v = k["fl_y"] * cam[:, 1] / cam[:, 2] + k["cy"]
            inside = (u > 1) & (u < k["w"] - 1) & (v > 1) & (v < k["h"] - 1) & (cam[:, 2] > 0)
            u, v, z, in_file = u[inside], v[inside], cam[inside, 2], in_file[inside]
            # nerfstudio's rays through those pixel coordinates ((y, x), centres at i + 0.5).
            coords = torch.tensor(np.stack([v, u], axis=1), dtype=torch.float32)
            rays = cameras.generate_rays(camera_indices=index, coords=coords)
            origins = rays.origins.numpy().astype(np.float64)
            directions = rays.directions.numpy().astype(np.float64)
            in_ns = (points[inside] @ ns_from_scan[:3, :3].T + ns_from_scan[:3, 3]) * scale
            to_point = in_ns - origins
            along = np.sum(to_point * directions, axis=1)
            off = np.linalg.norm(to_point - along[:, None] * directions, axis=1)
            angles.append(np.arctan2(off, along) * k["fl_x"])       # in pixels
            # The depth nerfstudio loads at those pixels.
            if depth_files:
                loaded = get_depth_image_from_path(Path(depth_files[index]), int(camera.height), int(camera.width),
                                                   depth_scale * scale)[..., 0].numpy()
                d = loaded[np.floor(v).astype(int), np.floor(u).astype(int)]
                known = d > 0
                depth_errors.append(np.abs(d[known] / scale - z[known]))
        angle = np.concatenate(angles)
        print(f"interop_nerfstudio: {len(cameras)} cameras; ray-to-point angle median {np.median(angle):.4f} px, "
              f"max {np.max(angle):.4f} px")
        if np.max(angle) > 0.05:
            failures.append(f"true points off nerfstudio's rays by up to {np.max(angle):.3f} px")
        if depth_errors:
            errors = np.concatenate(depth_errors)
            print(f"interop_nerfstudio: depth as nerfstudio loads it, {len(errors)} points: median error "
                  f"{np.median(errors) * 1000:.2f} mm, 90th percentile {np.quantile(errors, 0.9) * 1000:.2f} mm")
            if np.median(errors) > 0.004:
                failures.append(f"depth median error {np.median(errors) * 1000:.2f} mm")
        for failure in failures:
            print(f"interop_nerfstudio: MISMATCH: {failure}", file=sys.stderr)
        if not failures:
            print("interop_nerfstudio: OK, nerfstudio loads the export as rgbd wrote it")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
