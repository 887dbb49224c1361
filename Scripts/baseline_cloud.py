#!/usr/bin/env python3
"""Python baseline for `rgbd cloud` on one capture (benchmark only, not a test dependency).

    python3 Scripts/baseline_cloud.py CAPTURE.json IMAGE.jpg OUT.ply [--stages] [--keep-edges]

The "equivalent Python script" of `rgbd cloud` (docs/lens-model.md, docs/outputs.md): parses the
canonical capture layout with orjson, decodes the JPEG with OpenCV (pixels as stored, EXIF
orientation ignored), builds float32 rectification maps with the §4 formula
(baseline_rectify.rectification_maps), remaps the color image bilinearly through fixed-point
CV_16SC2 maps and the depth map with nearest sampling, averages the rectified color over each
depth pixel's footprint centered on the depth pixel (cv2.resize INTER_AREA to the depth
size after a shift by round((wc/wd - 1)/2) color pixels), back-projects every valid
depth pixel with the intrinsics scaled to the depth map,
    X = (u - cx) Z / fx,  Y = (v - cy) Z / fy,  Z      (meters, OpenCV camera frame),
drops holes and, like `rgbd cloud`'s default, points on depth discontinuities (depth differs
from one of its 4 neighbors' by more than 5 % of its own; --keep-edges keeps them), and
writes a binary little-endian PLY (float x y z, uchar red green blue) with plyfile.
With --stages, prints `timing <name> <milliseconds> ms` per stage to stderr (as rgbd's --timings).
Requirements: Scripts/requirements-bench.txt.
"""

import argparse
import sys
import time

import cv2
import numpy as np
from plyfile import PlyData, PlyElement

sys.dont_write_bytecode = True  # importing the sibling script must not leave Scripts/__pycache__
from baseline_rectify import (  # noqa: E402
    check_size, load_capture, rectification_maps, scaled_intrinsics)

EDGE_THRESHOLD = np.float32(0.05)  # rgbd cloud --flying-pixel-step default


def edge_mask(depth, threshold=EDGE_THRESHOLD):
    """True where a pixel's depth differs from a valid 4-neighbor's by > threshold * depth.

    Holes (NaN) are neither edges themselves here nor make their neighbors edges: comparisons
    with NaN are False.
    """
    edge = np.zeros(depth.shape, dtype=bool)
    lim = depth * threshold
    with np.errstate(invalid="ignore"):
        dx = np.abs(depth[:, 1:] - depth[:, :-1])     # jump between (v, u) and (v, u+1)
        edge[:, :-1] |= dx > lim[:, :-1]
        edge[:, 1:] |= dx > lim[:, 1:]
        dy = np.abs(depth[1:, :] - depth[:-1, :])     # jump between (v, u) and (v+1, u)
        edge[:-1, :] |= dy > lim[:-1, :]
        edge[1:, :] |= dy > lim[1:, :]
    return edge


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("capture", help="capture JSON (calibration_data + depth_data)")
    ap.add_argument("image", help="color JPEG, pixels as stored (EXIF orientation ignored)")
    ap.add_argument("output", help="output .ply path")
    ap.add_argument("--stages", action="store_true", help="print per-stage times to stderr")
    ap.add_argument("--keep-edges", action="store_true",
                    help="keep points on depth discontinuities (flying pixels)")
    args = ap.parse_args()

    times = []
    t_start = t_prev = time.perf_counter()

    def lap(name):
        nonlocal t_prev
        now = time.perf_counter()
        times.append((name, (now - t_prev) * 1e3))
        t_prev = now

    calib, depth = load_capture(args.capture)
    lut = calib["lens_distortion_lookup_table"]
    ref_w, ref_h = calib["intrinsic_matrix_reference_dimensions"]
    dcx, dcy = calib["lens_distortion_center"]
    lap("parse")

    color = cv2.imread(args.image, cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
    if color is None:
        raise SystemExit(f"baseline_cloud: cannot decode {args.image}")
    lap("decode")

    h, w = color.shape[:2]
    hd, wd = depth.shape
    check_size(calib, w, h, "color image")
    check_size(calib, wd, hd, "depth map")
    mapx, mapy = rectification_maps(w, h, (dcx * w / ref_w, dcy * h / ref_h), lut)
    cm1, cm2 = cv2.convertMaps(mapx, mapy, cv2.CV_16SC2)  # fixed-point maps for bilinear
    del mapx, mapy
    dmapx, dmapy = rectification_maps(wd, hd, (dcx * wd / ref_w, dcy * hd / ref_h), lut)
    lap("maps")

    color_rect = cv2.remap(color, cm1, cm2, cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    del color, cm1, cm2
    lap("remap_color")

    # Nearest sampling never blends across an edge, so it invents no flying pixels.
    depth_rect = cv2.remap(depth, dmapx, dmapy, cv2.INTER_NEAREST,
                           borderMode=cv2.BORDER_CONSTANT, borderValue=float("nan"))
    del dmapx, dmapy
    lap("remap_depth")

    # Mean color over each depth pixel's footprint. Depth pixel u sits at color position
    # u*s (s = wc/wd, pixel centers at integer indices, docs/outputs.md), so its footprint is
    # [u*s - s/2, u*s + s/2] in index coordinates. INTER_AREA averages output pixel u over
    # input pixels [u*s, (u+1)*s) in edge coordinates, whose center is (s-1)/2 color pixels
    # further right/down (2.125 px for s = 5.25): shift the image by round((s-1)/2) first,
    # which leaves a registration error below half a color pixel.
    ox, oy = round((w / wd - 1) / 2), round((h / hd - 1) / 2)
    shifted = cv2.copyMakeBorder(color_rect, oy, 0, ox, 0, cv2.BORDER_REPLICATE)
    del color_rect
    colors_small = cv2.resize(shifted[:h, :w], (wd, hd), interpolation=cv2.INTER_AREA)
    del shifted
    lap("colors")

    fx, fy, cx, cy = scaled_intrinsics(calib, wd, hd)
    with np.errstate(invalid="ignore"):
        valid = np.isfinite(depth_rect) & (depth_rect > 0)
    if not args.keep_edges:
        valid &= ~edge_mask(depth_rect)
    v, u = np.nonzero(valid)                      # row-major order, like Open3D
    z = depth_rect[v, u]
    verts = np.empty(z.size, dtype=[("x", "<f4"), ("y", "<f4"), ("z", "<f4"),
                                    ("red", "u1"), ("green", "u1"), ("blue", "u1")])
    verts["x"] = (u.astype(np.float32) - np.float32(cx)) * z / np.float32(fx)
    verts["y"] = (v.astype(np.float32) - np.float32(cy)) * z / np.float32(fy)
    verts["z"] = z
    bgr = colors_small[v, u]
    verts["red"], verts["green"], verts["blue"] = bgr[:, 2], bgr[:, 1], bgr[:, 0]
    lap("backproject")

    ply = PlyData([PlyElement.describe(verts, "vertex")], byte_order="<", comments=[
        "generated by Scripts/baseline_cloud.py",
        f"source {args.capture}",
        "units meters",
        "frame OpenCV camera frame (x right, y down, z forward)",
        f"intrinsics depth {wd}x{hd} fx {fx!r} fy {fy!r} cx {cx!r} cy {cy!r} (rectified pinhole)",
    ])
    ply.write(args.output)
    lap("write_ply")

    if args.stages:
        times.append(("total", (time.perf_counter() - t_start) * 1e3))
        for name, ms in times:
            print(f"timing {name} {ms:.3f} ms", file=sys.stderr)


if __name__ == "__main__":
    main()
