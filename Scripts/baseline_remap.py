#!/usr/bin/env python3
"""Micro-baseline for the rectify-color stage (benchmark only, not a test dependency).

    python3 Scripts/baseline_remap.py --width 4032 --height 3024 --runs 7 [--json FILE]

Times cv2.remap (INTER_LINEAR, BORDER_CONSTANT, 2 threads) of a seeded random RGB image
through the fixed-point (CV_16SC2) maps of a mild barrel distortion: a 42-entry table going
linearly in r^2 from 0 at the centre to -0.04 at the farthest corner, maps built with the
docs/lens-model.md formula (baseline_rectify.rectification_maps). Map building and conversion are
not timed; one untimed warm-up run precedes the timed ones. `remap` allocates its output
each call (fresh pages, as every call returning a new image does); `remap_into` writes
into one preallocated array (dst=), the pure computation. With --json FILE, also times
orjson.loads on FILE's bytes (read once, untimed).
Prints `bench <name> median_ms <ms> runs <ms> <ms> ...` lines on stdout, as rgbd-bench does
(names remap, remap_into, orjson).
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import orjson

sys.dont_write_bytecode = True  # importing the sibling script must not leave Scripts/__pycache__
from baseline_rectify import rectification_maps  # noqa: E402


def barrel_table(n=42, corner=-0.04):
    """Lookup table linear in r^2: entry k (radius k/(n-1) of r_max) is corner * (k/(n-1))^2."""
    return corner * (np.arange(n, dtype=np.float64) / (n - 1)) ** 2


def time_runs(fn, runs, warmup):
    """Milliseconds of each of `runs` calls of fn, after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def report(name, runs_ms):
    print(f"bench {name} median_ms {statistics.median(runs_ms):.3f} runs " + " ".join(f"{ms:.3f}" for ms in runs_ms))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--width", type=int, default=4032)
    ap.add_argument("--height", type=int, default=3024)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", metavar="FILE", help="also time orjson.loads of FILE")
    args = ap.parse_args()

    w, h = args.width, args.height
    img = np.random.default_rng(args.seed).integers(0, 256, (h, w, 3), dtype=np.uint8)
    mapx, mapy = rectification_maps(w, h, (w / 2, h / 2), barrel_table())
    m1, m2 = cv2.convertMaps(mapx, mapy, cv2.CV_16SC2)
    del mapx, mapy

    cv2.setNumThreads(2)
    report("remap", time_runs(
        lambda: cv2.remap(img, m1, m2, cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=0),
        args.runs, args.warmup))

    # The same into one preallocated output (dst=), as rgbd-bench's rectify_color_into.
    out = np.empty_like(img)
    report("remap_into", time_runs(
        lambda: cv2.remap(img, m1, m2, cv2.INTER_LINEAR, dst=out,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=0),
        args.runs, args.warmup))

    if args.json:
        data = Path(args.json).read_bytes()
        report("orjson", time_runs(lambda: orjson.loads(data), args.runs, args.warmup))


if __name__ == "__main__":
    main()
