#!/usr/bin/env python3
"""Baseline for AprilTag detection (benchmark only, not a test dependency).

    python3 Scripts/baseline_tags.py IMAGE.png --runs 7

Times pupil-apriltags (the AprilTag 3 C library called from Python) detecting tag36h11 on
IMAGE (the rectified color `rgbd rectify` wrote: the same pixels rgbd-bench's tags_detect
stage detects on), with the library's defaults that rgbd uses too: decimate 2, sigma 0,
edge refinement on, one thread. Gray conversion (cv2) is timed with detection, as rgbd's
stage converts RGB to gray inside. One untimed warm-up run. Prints
`bench pupil_detect median_ms <ms> runs <ms> ...` as rgbd-bench does, and a `# note` with
the number of tags found.
"""

import argparse
import statistics
import time

import cv2
from pupil_apriltags import Detector


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("image")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    rgb = cv2.imread(args.image, cv2.IMREAD_COLOR)
    if rgb is None:
        raise SystemExit(f"baseline_tags.py: cannot read {args.image}")
    detector = Detector(families="tag36h11", nthreads=1, quad_decimate=2.0, quad_sigma=0.0, refine_edges=1)

    def detect():
        gray = cv2.cvtColor(rgb, cv2.COLOR_BGR2GRAY)
        return detector.detect(gray)

    found = detect()
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        detect()
        times.append((time.perf_counter() - start) * 1000)
    print(f"# note pupil-apriltags found {len(found)} tags (hamming 0: {sum(1 for d in found if d.hamming == 0)})")
    print(f"bench pupil_detect median_ms {statistics.median(times):.3f} runs " + " ".join(f"{t:.3f}" for t in times))


if __name__ == "__main__":
    main()
