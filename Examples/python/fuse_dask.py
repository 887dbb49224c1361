#!/usr/bin/env python3
"""Many scans fused on Dask's distributed scheduler, one scan per task: one machine or a cluster.

    python3 Examples/python/fuse_dask.py SCAN... -o OUT_DIR [--voxel M] [--workers N] [--threads]
    python3 Examples/python/fuse_dask.py SCAN... -o OUT_DIR --scheduler tcp://HOST:8786

Each SCAN (a Stray Scanner folder, a Record3D .r3d file or EXR + JPG folder) is one task:
``rgbd.load_scene(SCAN).fuse(voxel=...)`` (docs/fuse.md) on a worker, which saves
OUT_DIR/NAME.npz with the mesh's arrays (``vertices`` (N,3) float32 meters, ``faces`` (M,3)
uint32, ``colors`` (N,3) uint8, ``normals`` (N,3) float32). Fusing uses every core of its
worker, so give each machine one worker process (``--workers`` = machines on a cluster,
``threads_per_worker=1``). As in batch_dask.py, the scans and OUT_DIR must be paths the
workers see (a shared file system), and every machine needs the rgbd package and its
library; only paths and small results travel. A scan that fails is reported and the others
go on; the exit status is 1 if any failed.

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


def fuse_scan(scan: str, out_dir: str, voxel: Optional[float]) -> Tuple[str, Optional[int], float, str]:
    """One task: fuse a scan, save OUT_DIR/NAME.npz. Returns ``(scan, triangles or None,
    seconds, error message)``; a bad scan is returned as an error, not raised, so it
    neither retries nor stops the batch."""
    start = time.perf_counter()
    name = Path(scan.rstrip("/")).stem
    try:
        with rgbd.load_scene(scan) as scene:
            mesh = scene.fuse(voxel=voxel)
        tmp = Path(out_dir) / f".{name}.npz.tmp.npz"
        np.savez_compressed(tmp, vertices=mesh.vertices, faces=mesh.faces, colors=mesh.colors, normals=mesh.normals)
        os.replace(tmp, Path(out_dir) / f"{name}.npz")
        return scan, len(mesh.faces), time.perf_counter() - start, ""
    except rgbd.RGBDError as error:
        return scan, None, time.perf_counter() - start, str(error)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scans", nargs="+", type=Path, help="scans: Stray Scanner folders, Record3D .r3d files")
    parser.add_argument("-o", "--output", type=Path, required=True, help="output directory (created)")
    parser.add_argument("--voxel", type=float, default=None,
                        help="voxel edge, meters (default: chosen by rgbd from each scan's depth)")
    parser.add_argument("--scheduler", help="address of a running Dask scheduler (default: a LocalCluster)")
    parser.add_argument("--workers", type=int, default=1, help="LocalCluster workers (default 1: fusing uses all cores)")
    parser.add_argument("--threads", action="store_true", help="LocalCluster workers as threads of this process")
    args = parser.parse_args(argv)

    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        print('dask.distributed is not installed: python3 -m pip install "dask[distributed]"', file=sys.stderr)
        return 1

    names = [Path(str(p).rstrip("/")).stem for p in args.scans]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        print(f"scans with the same name would write the same NAME.npz: {', '.join(twice)}", file=sys.stderr)
        return 1
    args.output.mkdir(parents=True, exist_ok=True)
    scans = [str(p.resolve()) for p in args.scans]
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
        futures = client.map(fuse_scan, scans, out_dir=out_dir, voxel=args.voxel, pure=False)
        for future in as_completed(futures):
            scan, triangles, seconds, error = future.result()
            if error:
                failed += 1
                print(f"error {scan}: {error}", file=sys.stderr, flush=True)
            else:
                print(f"ok   {Path(scan).stem}: {triangles} triangles ({seconds:.2f} s)", flush=True)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    print(f"{len(scans) - failed} of {len(scans)} scans in {time.perf_counter() - start:.1f} s -> {args.output}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
