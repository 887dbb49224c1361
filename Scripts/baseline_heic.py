"""HEIC decoding baseline of the benchmark (case heic of Benchmarks/cases.toml): pillow-heif, file to an RGB numpy array.

    python Scripts/baseline_heic.py FILE.heic [--runs N]

pillow-heif decodes on first access to the pixels, so each run opens the file and takes
the array (as a user of it would: `np.asarray(pillow_heif.open_heif(path))`). One untimed
warm-up, then N timed runs; prints `bench pillow_heif_decode median_ms X runs ...` as
rgbd-bench does, and the threads libheif may use.
"""

import argparse
import statistics
import time

import numpy as np
import pillow_heif


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()

    def decode():
        heif = pillow_heif.open_heif(args.file, convert_hdr_to_8bit=True)
        return np.asarray(heif)

    first = decode()
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        pixels = decode()
        times.append((time.perf_counter() - start) * 1000)
        del pixels
    runs = " ".join(f"{t:.3f}" for t in times)
    print(f"# pillow_heif {pillow_heif.__version__}, libheif {pillow_heif.libheif_version()}, "
          f"{first.shape[1]}x{first.shape[0]}, decode threads {pillow_heif.options.DECODE_THREADS}")
    print(f"bench pillow_heif_decode median_ms {statistics.median(times):.3f} runs {runs}")


if __name__ == "__main__":
    main()
