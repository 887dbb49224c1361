#!/usr/bin/env python3
"""The batch of batch_process_pool.py on Dask's distributed scheduler: one machine or a cluster.

    python3 Examples/python/batch_dask.py CAPTURES_DIR -o OUT_DIR [--workers N] [--threads]
    python3 Examples/python/batch_dask.py CAPTURES_DIR -o OUT_DIR --scheduler tcp://HOST:8786

Without --scheduler, a LocalCluster is started on this machine (--workers worker processes,
or threads of this process with --threads). With --scheduler, the same tasks go to a running
cluster (`dask scheduler` and `dask worker tcp://HOST:8786` on each machine): the code does
not change. On a cluster, every machine (the scheduler too: it unpickles the tasks, which
refer to the rgbd module) needs the rgbd package, and the workers its library
(`pip install ./python` with libRGBDKit.so next to the package or $RGBD_LIBRARY set, see
python/README.md); CAPTURES_DIR and OUT_DIR must be paths that the workers see (a shared
file system): only paths and small results travel over the network.

For each capture NAME (NAME.json + NAME.jpg), OUT_DIR receives NAME.ply (the file `rgbd
cloud` writes) and NAME.npz (rectified color and depth, intrinsics). A failed capture is
reported and the others go on; the exit status is 1 if any failed.

Needs dask[distributed] (`pip install "dask[distributed]"`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np

import rgbd


def find_captures(directory: Path) -> List[Path]:
    """Every NAME.json in ``directory`` with a NAME.jpg or NAME.jpeg beside it, sorted."""
    images = {p.stem for p in directory.iterdir() if p.suffix.lower() in (".jpg", ".jpeg")}
    return sorted(p for p in directory.glob("*.json") if p.stem in images)


def process_capture(json_path: str, out_dir: str, stride: int = 1,
                    normals: bool = False) -> Tuple[str, Optional[int], float, str]:
    """One task: rectify a capture, write OUT_DIR/NAME.npz and OUT_DIR/NAME.ply.

    Runs on a Dask worker, so it is defined in this script (Dask ships it to the workers by
    value) and returns plain values: ``(json path, points or None, seconds, error message)``.
    A bad capture is returned as an error rather than raised, so one bad file neither
    retries nor stops the batch.
    """
    start = time.perf_counter()
    out = Path(out_dir)
    try:
        with rgbd.load_capture(json_path) as cap:
            k = cap.intrinsics
            tmp = out / f".{cap.name}.npz.tmp.npz"
            np.savez_compressed(tmp, color=cap.rectified_color(), depth=cap.rectified_depth(),
                                color_intrinsics=k.color.matrix, depth_intrinsics=k.depth.matrix)
            os.replace(tmp, out / f"{cap.name}.npz")
            cap.write_ply(out / f"{cap.name}.ply", stride=stride, normals=normals)
            return json_path, cap.point_cloud_count(stride=stride), time.perf_counter() - start, ""
    except rgbd.RGBDError as error:
        return json_path, None, time.perf_counter() - start, str(error)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("captures", type=Path, help="directory of NAME.json + NAME.jpg captures")
    parser.add_argument("-o", "--output", type=Path, required=True, help="output directory (created)")
    parser.add_argument("--scheduler", help="address of a running Dask scheduler (default: a LocalCluster)")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster workers (default 2)")
    parser.add_argument("--threads", action="store_true",
                        help="LocalCluster workers as threads of this process (processes=False)")
    parser.add_argument("--stride", type=int, default=1, help="keep every N-th depth pixel (default 1)")
    parser.add_argument("--normals", action="store_true", help="add normals to the PLY files")
    args = parser.parse_args(argv)

    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        print('dask.distributed is not installed: python3 -m pip install "dask[distributed]"', file=sys.stderr)
        return 1

    captures = find_captures(args.captures)
    if not captures:
        print(f"no captures (NAME.json + NAME.jpg) in {args.captures}", file=sys.stderr)
        return 1
    args.output.mkdir(parents=True, exist_ok=True)
    # Absolute paths: on a cluster the workers' working directory is not ours.
    paths = [str(p.resolve()) for p in captures]
    out_dir = str(args.output.resolve())

    if args.scheduler:
        client, cluster = Client(args.scheduler), None
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=not args.threads,
                               dashboard_address=None)
        client = Client(cluster)
    failed = 0
    start = time.perf_counter()
    try:
        futures = client.map(process_capture, paths, out_dir=out_dir, stride=args.stride, normals=args.normals,
                             pure=False)
        for future in as_completed(futures):
            path, count, seconds, error = future.result()
            if error:
                failed += 1
                print(f"error {path}: {error}", file=sys.stderr, flush=True)
            else:
                print(f"ok   {Path(path).stem}: {count} points ({seconds:.2f} s)", flush=True)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    print(f"{len(paths) - failed} of {len(paths)} captures in {time.perf_counter() - start:.1f} s "
          f"-> {args.output}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
