#!/usr/bin/env python3
"""The frames benchmark's in-process program (case `frames` of Benchmarks/cases.toml):
rgbd.Rectifier against cv2.remap per video frame, in one process, one round.

    RGBD_LIBRARY=LIB python3 Scripts/bench/frames.py [--package DIR] [--width 1920] [--height 1440]
        [--runs 15] [--round N]

Both sides rectify the same seeded random frames with the same lens (Scripts/baseline_remap.py's:
reference size = frame size, center in the middle, 42-entry table −0.04·(k/41)²) into
preallocated outputs, 2 threads each (cv2.setNumThreads(2); rgbd uses the 2 cores):

- OpenCV (the baseline): maps built once with numpy (baseline_rectify.rectification_maps,
  float64), converted once to fixed point (cv2.convertMaps, CV_16SC2), then cv2.remap
  (INTER_LINEAR, BORDER_CONSTANT, dst=) per frame. NV12 is remap of the Y plane plus remap of
  the interleaved UV plane with half-size maps.
- rgbd: rgbd.Rectifier(lens, (width, height)) created once, then called per frame with out=
  (through ctypes, as a Python user calls it; the package from --package, default the
  repository's python/, with the library of $RGBD_LIBRARY); NV12 with Rectifier.nv12 (both
  planes, one call). Also rgbd with positions computed per frame (max_map_bytes=0).

Kinds: luminance (H×W), RGB (H×W×3), BGRA (H×W×4), NV12. Each side runs one untimed warm-up
then --runs timed calls per kind; the sides' order alternates with the parity of --round (the
harness runs several rounds and pools them). Prints, as rgbd-bench does:

    bench opencv_<kind> | rgbd_<kind> | rgbd_<kind>_per_frame median_ms X runs ...
    bench setup_opencv | setup_opencv_convert | setup_rgbd median_ms X runs ...   (5 creations)
    bytes opencv_maps | rgbd_rectifier | rgbd_rectifier_per_frame N             (memory kept)
    # agreement ...   (the outputs of both sides, within interpolation rounding: same lens)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np

SCRIPTS = Path(__file__).resolve().parents[1]
sys.dont_write_bytecode = True  # importing the baseline scripts must not leave Scripts/__pycache__
sys.path.insert(0, str(SCRIPTS))
from baseline_rectify import rectification_maps  # noqa: E402
from baseline_remap import barrel_table, report, time_runs  # noqa: E402


def timed(fn, runs):
    """Milliseconds of each of `runs` calls of fn, after one untimed call."""
    return time_runs(fn, runs, warmup=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package", type=Path, default=SCRIPTS.parent / "python",
                    help="the folder holding the rgbd Python package (default: the repository's python/)")
    ap.add_argument("--width", type=int, default=1920)
    ap.add_argument("--height", type=int, default=1440)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--round", type=int, default=1, help="odd: OpenCV first; even: rgbd first")
    args = ap.parse_args()
    sys.path.insert(0, str(args.package))
    import rgbd  # noqa: E402  (the package under test)

    w, h = args.width, args.height
    cv2.setNumThreads(2)
    table = barrel_table()
    lens = ((w, h), (w / 2, h / 2), table.astype(np.float32))
    border = dict(interpolation=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)

    # ---- setup: once per camera and frame size
    def cv_setup():
        mx, my = rectification_maps(w, h, (w / 2, h / 2), table)
        cx, cy = rectification_maps(w // 2, h // 2, (w / 4, h / 4), table)
        return cv2.convertMaps(mx, my, cv2.CV_16SC2) + cv2.convertMaps(cx, cy, cv2.CV_16SC2)

    float_maps = rectification_maps(w, h, (w / 2, h / 2), table) + rectification_maps(w // 2, h // 2, (w / 4, h / 4), table)
    report("setup_opencv", timed(cv_setup, 5))
    report("setup_opencv_convert", timed(lambda: cv2.convertMaps(float_maps[0], float_maps[1], cv2.CV_16SC2)
                                         + cv2.convertMaps(float_maps[2], float_maps[3], cv2.CV_16SC2), 5))
    report("setup_rgbd", timed(lambda: rgbd.Rectifier(lens, (w, h)).close(), 5))
    m1, m2, c1, c2 = cv_setup()
    rectifier = rgbd.Rectifier(lens, (w, h))
    per_frame = rgbd.Rectifier(lens, (w, h), max_map_bytes=0)
    print(f"bytes opencv_maps {m1.nbytes + m2.nbytes + c1.nbytes + c2.nbytes}")
    print(f"bytes rgbd_rectifier {rectifier.bytes_held}")
    print(f"bytes rgbd_rectifier_per_frame {per_frame.bytes_held}")

    rng = np.random.default_rng(0)
    y = rng.integers(0, 256, (h, w), dtype=np.uint8)
    rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    bgra = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
    uv = rng.integers(0, 256, (h // 2, w // 2, 2), dtype=np.uint8)
    cv_out = {k: np.empty_like(v) for k, v in (("y", y), ("rgb", rgb), ("bgra", bgra), ("uv", uv))}
    rg_out = {k: np.empty_like(v) for k, v in (("y", y), ("rgb", rgb), ("bgra", bgra), ("uv", uv))}

    def cv_nv12():
        cv2.remap(y, m1, m2, dst=cv_out["y"], **border)
        cv2.remap(uv, c1, c2, dst=cv_out["uv"], **border)

    kinds = {
        "luminance": (lambda: cv2.remap(y, m1, m2, dst=cv_out["y"], **border),
                      lambda: rectifier(y, out=rg_out["y"]), lambda: per_frame(y, out=rg_out["y"])),
        "rgb": (lambda: cv2.remap(rgb, m1, m2, dst=cv_out["rgb"], **border),
                lambda: rectifier(rgb, out=rg_out["rgb"]), lambda: per_frame(rgb, out=rg_out["rgb"])),
        "bgra": (lambda: cv2.remap(bgra, m1, m2, dst=cv_out["bgra"], **border),
                 lambda: rectifier(bgra, out=rg_out["bgra"]), lambda: per_frame(bgra, out=rg_out["bgra"])),
        "nv12": (cv_nv12, lambda: rectifier.nv12(y, uv, out_y=rg_out["y"], out_cbcr=rg_out["uv"]),
                 lambda: per_frame.nv12(y, uv, out_y=rg_out["y"], out_cbcr=rg_out["uv"])),
    }
    # Same lens on both sides: the outputs agree up to interpolation rounding.
    for cv_fn, rg_fn, _ in kinds.values():
        cv_fn()
        rg_fn()
    agreement = []
    for key in ("y", "rgb", "bgra", "uv"):
        inner = (slice(8, -8), slice(8, -8))
        diff = np.abs(cv_out[key][inner].astype(np.int16) - rg_out[key][inner].astype(np.int16))
        agreement.append(f"{key} mean |Δ| {float(diff.mean()):.2f}, max {int(diff.max())}")
    print("# agreement of the outputs, 8 px from the border (OpenCV's 1/32-pixel weights against "
          "rgbd's 1/128; UV: OpenCV's half-size maps use the lens scaled to the plane, rgbd the left siting): "
          + "; ".join(agreement))

    names = ("opencv_{}", "rgbd_{}", "rgbd_{}_per_frame")
    order = (0, 1, 2) if args.round % 2 == 1 else (2, 1, 0)
    times = {}
    for kind, fns in kinds.items():
        for side in order:
            times[names[side].format(kind)] = timed(fns[side], args.runs)
    for kind in kinds:
        for name in names:
            report(name.format(kind), times[name.format(kind)])
    print(f"# cv2 {cv2.__version__} with 2 threads; rgbd {getattr(rgbd, '__version__', '?')} through ctypes")


if __name__ == "__main__":
    main()
