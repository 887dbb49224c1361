#!/usr/bin/env python3
"""Summary of a Scripts/bench-png.sh run (benchmark only, not a test dependency).

    python3 Scripts/bench_png_summary.py RAWDIR [--markdown FILE]

Reads, in RAWDIR: after.<capture>.round<i>.txt and after.<capture>.small.txt (and
before.<capture>.round<i>.txt if another build ran), rgbd-bench output (`bench <stage>
median_ms <x> runs <ms>...` and `bytes <stage> <n>` lines); rgbd.<i>.time, py.<i>.time,
before.<i>.time (`<wall seconds> <peak KiB>`) of the whole-process runs; loadavg-start.txt,
loadavg-end.txt. Pools the runs of all rounds per stage and prints medians, bytes and the
issue's ratios (PASS/FAIL) as markdown; with --markdown also writes it to FILE.
"""

import argparse
import re
import statistics
import subprocess
import sys
from pathlib import Path

CAPTURES = {"bench": "synthetic, noise σ 6 (4032×3024)", "smooth": "synthetic, no noise (4032×3024)",
            "photo": "real photograph (5312×2988)",
            "sunset": "photograph: sunset (4272×2848, MORE_PHOTOS)",
            "bird": "photograph: bird on bark (6028×3391, MORE_PHOTOS)"}


def parse(path):
    runs, sizes = {}, {}
    for line in path.read_text().splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[0] == "bench" and fields[2] == "median_ms" and fields[4] == "runs":
            runs.setdefault(fields[1], []).extend(float(x) for x in fields[5:])
        elif len(fields) == 3 and fields[0] == "bytes":
            sizes[fields[1]] = int(fields[2])
    return runs, sizes


def pooled(raw, pattern):
    runs, sizes = {}, {}
    for path in sorted(raw.glob(pattern)):
        r, s = parse(path)
        for k, v in r.items():
            runs.setdefault(k, []).extend(v)
        for k, v in s.items():
            if k in sizes and sizes[k] != v:
                raise SystemExit(f"bench_png_summary: {k} made {sizes[k]} and {v} bytes in {raw}")
            sizes[k] = v
    return runs, sizes


def walls(raw, prefix):
    out = []
    for path in sorted(raw.glob(f"{prefix}.[0-9]*.time")):
        out.append(float(path.read_text().split()[0]))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("raw", type=Path)
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    raw = args.raw
    lines = []
    mb = lambda n: f"{n / 1e6:.2f} MB"
    ms = lambda v: f"{statistics.median(v):.0f} ms" if v else "—"

    lines.append("| capture | stage | bytes | median time (pooled runs) |")
    lines.append("|---|---|---|---|")
    goals = []
    for capture, label in CAPTURES.items():
        runs, sizes = pooled(raw, f"after.{capture}.round*.txt")
        small_runs, small_sizes = pooled(raw, f"after.{capture}.small.txt")
        before_runs, before_sizes = pooled(raw, f"before.{capture}.round*.txt")
        if not runs:
            continue
        rows = [("encode_color_png (default)", sizes.get("encode_color_png"), runs.get("encode_color_png", [])),
                ("png_baseline_isal_single", sizes.get("png_baseline_isal_single"),
                 runs.get("png_baseline_isal_single", [])),
                ("encode_color_png_small (--small-png)", small_sizes.get("encode_color_png_small"),
                 small_runs.get("encode_color_png_small", []))]
        if before_runs:
            rows.append(("before: encode_color_png", before_sizes.get("encode_color_png"),
                         before_runs.get("encode_color_png", [])))
        rows.append(("encode_depth_png", sizes.get("encode_depth_png"), runs.get("encode_depth_png", [])))
        if before_runs:
            rows.append(("before: encode_depth_png", before_sizes.get("encode_depth_png"),
                         before_runs.get("encode_depth_png", [])))
        for name, size, times in rows:
            size_text = "—" if size is None else (mb(size) if size > 100_000 else f"{size / 1e3:.1f} KB")
            lines.append(f"| {label} | {name} | {size_text} | {ms(times)} |")
        png, base = sizes.get("encode_color_png"), sizes.get("png_baseline_isal_single")
        t_png, t_base = runs.get("encode_color_png", []), runs.get("png_baseline_isal_single", [])
        if png and base:
            r = png / base
            goals.append(f"| {label} | default bytes ≤ 1.05× baseline | {r:.3f}× | {'PASS' if r <= 1.05 else 'FAIL'} |")
        if t_png and t_base:
            r = statistics.median(t_png) / statistics.median(t_base)
            goals.append(f"| {label} | encode_color_png time ≤ 1.0× baseline | {r:.2f}× | {'PASS' if r <= 1.0 else 'FAIL'} |")
        small = small_sizes.get("encode_color_png_small")
        if small and png:
            r = small / png
            goals.append(f"| {label} | --small-png bytes ≤ 0.95× default | {r:.3f}× | {'PASS' if r <= 0.95 else 'FAIL'} |")
        if small and base:
            goals.append(f"| {label} | (--small-png bytes against the baseline) | {small / base:.3f}× | — |")

    lines.append("")
    lines.append("| capture | goal | figure | |")
    lines.append("|---|---|---|---|")
    lines.extend(goals)

    rgbd, py, before = walls(raw, "rgbd"), walls(raw, "py"), walls(raw, "before")
    if rgbd and py:
        lines.append("")
        lines.append("Whole `rgbd rectify` on the photograph (wall seconds, median of interleaved runs): "
                     f"rgbd {statistics.median(rgbd):.2f} s"
                     + (f", before {statistics.median(before):.2f} s" if before else "")
                     + f", Python/OpenCV {statistics.median(py):.2f} s "
                     f"(rgbd {statistics.median(py) / statistics.median(rgbd):.1f}× faster"
                     + (f"; before {statistics.median(py) / statistics.median(before):.1f}×" if before else "")
                     + ").")
        lines.append(f"Runs: rgbd {' '.join(f'{x:.2f}' for x in rgbd)}; python {' '.join(f'{x:.2f}' for x in py)}"
                     + (f"; before {' '.join(f'{x:.2f}' for x in before)}" if before else "") + ".")
    sizes = raw / "photo-png-sizes.txt"
    if sizes.exists():
        lines.append("Color PNG of the photograph: " + "; ".join(
            f"{Path(p).parent.name}: {mb(int(n))}" for n, p in (l.split() for l in sizes.read_text().splitlines())) + ".")
    load = [(raw / f).read_text().split()[:3] for f in ("loadavg-start.txt", "loadavg-end.txt") if (raw / f).exists()]
    if load:
        lines.append("Load average (1, 5, 15 min) at start / end: " + " / ".join(" ".join(l) for l in load) + ".")
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        lines.append(f"Commit {commit}.")
    except OSError:
        pass
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
