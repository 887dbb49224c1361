#!/usr/bin/env python3
"""Rectify every capture of a directory and write its point cloud, on a process pool.

    python3 Examples/python/batch_process_pool.py CAPTURES_DIR -o OUT_DIR [--workers N]

A capture is every NAME.json with a NAME.jpg / NAME.jpeg beside it (any case), as for
`rgbd rectify DIR`. For each one, OUT_DIR receives:

    NAME.ply   the point cloud, the same file `rgbd cloud` writes (PLY, meters)
    NAME.npz   rectified color (H×W×3 uint8), rectified depth (h×w float32 meters, NaN =
               no depth) and the 3×3 intrinsics of both (numpy.load reads it)

A capture that fails is reported on stderr and the others go on; the exit status is 1 if
any failed. Each worker process loads the library itself: only paths cross process
boundaries (rgbd.Capture objects cannot be pickled). The library already uses every core
for one capture's rectification, so a few workers are enough to keep a machine busy.

Needs the rgbd package (`pip install ./python`) and its library (see python/README.md).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import sys
import time
from pathlib import Path
from typing import List, Tuple

import numpy as np

import rgbd


def find_captures(directory: Path) -> List[Path]:
    """Every NAME.json in ``directory`` with a NAME.jpg or NAME.jpeg beside it, sorted."""
    images = {p.stem for p in directory.iterdir() if p.suffix.lower() in (".jpg", ".jpeg")}
    return sorted(p for p in directory.glob("*.json") if p.stem in images)


def process_capture(json_path: str, out_dir: str, stride: int = 1, normals: bool = False) -> Tuple[str, int, float]:
    """Rectifies one capture and writes OUT_DIR/NAME.npz and OUT_DIR/NAME.ply.

    Returns ``(name, number of points, seconds)``; raises rgbd.RGBDError for a bad capture.
    Runs in a worker process: takes and returns only plain values.
    """
    start = time.perf_counter()
    out = Path(out_dir)
    with rgbd.load_capture(json_path) as cap:
        k = cap.intrinsics
        # Write under a temporary name and rename, so no half-written file ever appears.
        tmp = out / f".{cap.name}.npz.tmp.npz"
        np.savez_compressed(tmp, color=cap.rectified_color(), depth=cap.rectified_depth(),
                            color_intrinsics=k.color.matrix, depth_intrinsics=k.depth.matrix)
        os.replace(tmp, out / f"{cap.name}.npz")
        cap.write_ply(out / f"{cap.name}.ply", stride=stride, normals=normals)
        count = cap.point_cloud_count(stride=stride)
        return cap.name, count, time.perf_counter() - start


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("captures", type=Path, help="directory of NAME.json + NAME.jpg captures")
    parser.add_argument("-o", "--output", type=Path, required=True, help="output directory (created)")
    parser.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1), help="worker processes")
    parser.add_argument("--stride", type=int, default=1, help="keep every N-th depth pixel (default 1)")
    parser.add_argument("--normals", action="store_true", help="add normals to the PLY files")
    args = parser.parse_args(argv)

    captures = find_captures(args.captures)
    if not captures:
        print(f"no captures (NAME.json + NAME.jpg) in {args.captures}", file=sys.stderr)
        return 1
    args.output.mkdir(parents=True, exist_ok=True)
    failed = 0
    start = time.perf_counter()
    # The parent never calls into the library, so forking workers (Linux's default) is safe.
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.workers) as pool:
        futures = {pool.submit(process_capture, str(path), str(args.output), args.stride, args.normals): path
                   for path in captures}
        for future in concurrent.futures.as_completed(futures):
            path = futures[future]
            try:
                name, count, seconds = future.result()
                print(f"ok   {name}: {count} points ({seconds:.2f} s)", flush=True)
            except rgbd.RGBDError as error:
                failed += 1
                print(f"error {path}: {error}", file=sys.stderr, flush=True)
    print(f"{len(captures) - failed} of {len(captures)} captures in {time.perf_counter() - start:.1f} s "
          f"-> {args.output}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
