#!/usr/bin/env python3
"""Python baseline for `rgbd rectify` on one capture (benchmark only, not a test dependency).

    python3 Scripts/baseline_rectify.py CAPTURE.json IMAGE.jpg OUTDIR [--stages]

Reads the canonical capture layout (docs/format.md), rectifies the color image
and the depth map with Apple's lookup-table model (§3-§4) and writes, for stem = CAPTURE's
file name without extension:
    <stem>.color.png        8-bit color, bilinear (OpenCV fixed-point CV_16SC2 maps)
    <stem>.depth.png        uint16 millimetres, 0 = no depth (nearest sampling)
    <stem>.depth.tiff       float32 metres, NaN = no depth
    <stem>.intrinsics.json  {"color": {...}, "depth": {...}} in Open3D's pinhole layout
With --stages, prints `timing <name> <milliseconds> ms` per stage to stderr (as rgbd's --timings).
Requirements: Scripts/requirements-bench.txt.
"""

import argparse
import json
import math
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import orjson
import tifffile


def load_capture(path):
    """Parse the capture JSON; return (calibration dict, depth as float32 with NaN holes)."""
    data = Path(path).read_bytes()
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        # orjson is strict JSON; Python-made files may hold bare NaN/Infinity (docs/format.md).
        print("baseline_rectify: not strict JSON, falling back to json.loads", file=sys.stderr)
        doc = json.loads(data)
    calib = doc["calibration_data"]
    # numpy turns null into NaN for a float dtype; 0, negatives and inf also mean "no depth".
    depth = np.array(doc["depth_data"], dtype=np.float32)
    if depth.ndim != 2:
        raise ValueError(f"{path}: depth_data is not a list of equal-length rows")
    with np.errstate(invalid="ignore"):
        depth[~(np.isfinite(depth) & (depth > 0))] = np.nan
    return calib, depth


def scaled_intrinsics(calib, w, h):
    """(fx, fy, cx, cy) of the column-major intrinsic_matrix scaled to a w x h image (§3)."""
    (fx, _, _), (_, fy, _), (cx, cy, _) = calib["intrinsic_matrix"]
    ref_w, ref_h = calib["intrinsic_matrix_reference_dimensions"]
    sx, sy = w / ref_w, h / ref_h
    return fx * sx, fy * sy, cx * sx, cy * sy


def check_size(calib, w, h, what):
    """Reject a transposed image (§2) and warn on an aspect-ratio mismatch over 1% (§3)."""
    ref_w, ref_h = calib["intrinsic_matrix_reference_dimensions"]
    mismatch = abs((w / h) / (ref_w / ref_h) - 1)
    if mismatch > 0.01 and abs((h / w) / (ref_w / ref_h) - 1) <= 0.01:
        raise ValueError(f"{what} is {w}x{h} but the calibration is {ref_w}x{ref_h}: "
                         "transposed (EXIF orientation applied?)")
    if mismatch > 0.01:
        print(f"baseline_rectify: warning: {what} aspect {w}x{h} differs from "
              f"reference {ref_w}x{ref_h} by more than 1%", file=sys.stderr)


def rectification_maps(w, h, center, lut):
    """Float32 backward maps (mapx, mapy) of shape (h, w), docs/lens-model.md.

    r_max = sqrt(max(cx, w-cx)^2 + max(cy, h-cy)^2); for integer pixel p, v = p - c,
    r = |v|, t = r (n-1) / r_max, i = min(floor(t), n-2), f = t - i,
    mag = lut[i] + (lut[i+1] - lut[i]) f if r < r_max else lut[n-1]; map = c + v (1 + mag).
    """
    lut = np.asarray(lut, dtype=np.float32)
    n = lut.size
    cx, cy = center
    r_max = math.hypot(max(cx, w - cx), max(cy, h - cy))
    vx = np.arange(w, dtype=np.float32) - np.float32(cx)             # (w,)
    vy = (np.arange(h, dtype=np.float32) - np.float32(cy))[:, None]  # (h, 1)
    # In-place steps keep the peak at a few (h, w) arrays instead of a dozen.
    r = vx * vx + vy * vy                                              # (h, w) float32
    np.sqrt(r, out=r)
    f = r * np.float32((n - 1) / r_max)                                # t
    i = np.floor(f)
    np.minimum(i, n - 2, out=i)
    f -= i                                                             # f = t - i
    idx = i.astype(np.intp)
    del i
    mag = np.take(lut[:-1], idx)
    mag += np.take(np.diff(lut), idx) * f                              # lut[i] + (lut[i+1]-lut[i]) f
    del idx, f
    mag[~(r < r_max)] = lut[n - 1]
    del r
    mag += np.float32(1)                                               # 1 + mag
    mapx = vx * mag
    mapx += np.float32(cx)
    mapy = vy * mag
    mapy += np.float32(cy)
    return mapx, mapy


def pinhole(w, h, fx, fy, cx, cy):
    """Open3D PinholeCameraIntrinsic JSON object (intrinsic_matrix column-major)."""
    return {"width": w, "height": h,
            "intrinsic_matrix": [fx, 0.0, 0.0, 0.0, fy, 0.0, cx, cy, 1.0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("capture", help="capture JSON (calibration_data + depth_data)")
    ap.add_argument("image", help="color JPEG, pixels as stored (EXIF orientation ignored)")
    ap.add_argument("outdir")
    ap.add_argument("--stages", action="store_true", help="print per-stage times to stderr")
    args = ap.parse_args()

    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    stem = Path(args.capture).stem
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

    if Path(args.image).suffix.lower() in (".heic", ".heif"):
        # OpenCV reads no HEIC: pillow-heif, as such a user would, pixels as stored
        # (no rotation, like rgbd), RGB to OpenCV's BGR.
        import pillow_heif
        heif = pillow_heif.open_heif(args.image, convert_hdr_to_8bit=True)
        color = cv2.cvtColor(np.asarray(heif), cv2.COLOR_RGB2BGR)
    else:
        color = cv2.imread(args.image, cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
    if color is None:
        raise SystemExit(f"baseline_rectify: cannot decode {args.image}")
    lap("decode")

    h, w = color.shape[:2]
    check_size(calib, w, h, "color image")
    mapx, mapy = rectification_maps(w, h, (dcx * w / ref_w, dcy * h / ref_h), lut)
    m1, m2 = cv2.convertMaps(mapx, mapy, cv2.CV_16SC2)  # fixed-point maps for bilinear
    del mapx, mapy
    lap("maps_color")

    color_rect = cv2.remap(color, m1, m2, cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    del m1, m2
    lap("rectify_color")

    hd, wd = depth.shape
    check_size(calib, wd, hd, "depth map")
    mapx, mapy = rectification_maps(wd, hd, (dcx * wd / ref_w, dcy * hd / ref_h), lut)
    lap("maps_depth")

    # Nearest sampling never blends across an edge, so it invents no flying pixels.
    depth_rect = cv2.remap(depth, mapx, mapy, cv2.INTER_NEAREST,
                           borderMode=cv2.BORDER_CONSTANT, borderValue=float("nan"))
    lap("rectify_depth")

    if not cv2.imwrite(str(out / f"{stem}.color.png"), color_rect):
        raise SystemExit("baseline_rectify: cannot write color PNG")
    lap("write_color_png")

    mm = np.nan_to_num(np.round(depth_rect * 1000), nan=0.0)
    depth_mm = np.clip(mm, 0, 65535).astype(np.uint16)
    if not cv2.imwrite(str(out / f"{stem}.depth.png"), depth_mm):
        raise SystemExit("baseline_rectify: cannot write depth PNG")
    lap("write_depth_png")

    tifffile.imwrite(out / f"{stem}.depth.tiff", depth_rect)
    lap("write_depth_tiff")

    intrinsics = {"color": pinhole(w, h, *scaled_intrinsics(calib, w, h)),
                  "depth": pinhole(wd, hd, *scaled_intrinsics(calib, wd, hd))}
    (out / f"{stem}.intrinsics.json").write_bytes(
        orjson.dumps(intrinsics, option=orjson.OPT_INDENT_2))
    lap("write_intrinsics")

    if args.stages:
        times.append(("total", (time.perf_counter() - t_start) * 1e3))
        for name, ms in times:
            print(f"timing {name} {ms:.3f} ms", file=sys.stderr)


if __name__ == "__main__":
    main()
