#!/usr/bin/env python3
"""Rectify every frame of a video with the calibration of an rgbd capture.

    python3 Examples/python/rectify_video.py CAPTURE.json IN_VIDEO OUT_VIDEO [--fourcc CODE]

The video must come from the camera the capture was taken with, in sensor orientation
(its frames may have any size: the lens is scaled to it). One `rgbd.Rectifier` is created
for the frame size and applied to every frame, writing into one reused buffer; a frame
costs only the resampling. Frames are read and written with OpenCV (its bundled FFmpeg);
the output codec is FFV1 (lossless) for .mkv/.avi, mp4v for .mp4, or --fourcc.
Prints the number of frames and the time per frame spent rectifying.

Needs opencv-python (or opencv-python-headless) and the rgbd package.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import List, Optional

import cv2
import numpy as np

import rgbd


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("capture", type=Path, help="capture JSON whose calibration to use (its photo beside it)")
    parser.add_argument("input", type=Path, help="video to rectify")
    parser.add_argument("output", type=Path, help="rectified video to write")
    parser.add_argument("--fourcc", help="output codec (default: FFV1 for .mkv/.avi, mp4v for .mp4)")
    args = parser.parse_args(argv)

    with rgbd.load_capture(str(args.capture)) as capture:
        lens = capture.lens
    video = cv2.VideoCapture(str(args.input))
    if not video.isOpened():
        print(f"rectify_video: cannot open {args.input}", file=sys.stderr)
        return 1
    width = int(video.get(cv2.CAP_PROP_FRAME_WIDTH))
    height = int(video.get(cv2.CAP_PROP_FRAME_HEIGHT))
    fps = video.get(cv2.CAP_PROP_FPS) or 30.0
    fourcc = args.fourcc or ("mp4v" if args.output.suffix.lower() == ".mp4" else "FFV1")
    writer = cv2.VideoWriter(str(args.output), cv2.VideoWriter_fourcc(*fourcc), fps, (width, height))
    if not writer.isOpened():
        print(f"rectify_video: cannot write {args.output} with codec {fourcc}", file=sys.stderr)
        return 1

    rectifier = rgbd.Rectifier(lens, (width, height))     # once for the camera and frame size
    rectified = np.empty((height, width, 3), np.uint8)      # reused for every frame
    frames, seconds = 0, 0.0
    try:
        while True:
            ok, frame = video.read()                        # BGR, H×W×3 uint8
            if not ok:
                break
            start = time.perf_counter()
            rectifier(frame, out=rectified)                 # channels are independent: BGR stays BGR
            seconds += time.perf_counter() - start
            writer.write(rectified)
            frames += 1
    finally:
        video.release()
        writer.release()
        rectifier.close()
    if frames == 0:
        print(f"rectify_video: no frames could be read from {args.input}", file=sys.stderr)
        return 1
    print(f"rectified {frames} frames of {width}x{height} into {args.output}: "
          f"{seconds / frames * 1e3:.2f} ms per frame")
    return 0


if __name__ == "__main__":
    sys.exit(main())
