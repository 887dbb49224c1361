"""Encodes a photo as HEIC the way an iPhone stores it, for the benchmark (workload heic of
Benchmarks/cases.toml).

    python Scripts/make_heic.py SOURCE.jpg OUT.heic [--tile 512] [--quality 75]

A grid of 512-px HEVC tiles (tile 0: one single image), 4:2:0, with pillow-heif.
"""

import argparse

import numpy as np
import pillow_heif
from PIL import Image


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--tile", type=int, default=512)
    ap.add_argument("--quality", type=int, default=75)
    args = ap.parse_args()
    pixels = np.asarray(Image.open(args.source).convert("RGB"))
    heif = pillow_heif.from_bytes(mode="RGB", size=(pixels.shape[1], pixels.shape[0]), data=pixels.tobytes())
    heif.save(args.out, quality=args.quality, tile_size=args.tile)


if __name__ == "__main__":
    main()
