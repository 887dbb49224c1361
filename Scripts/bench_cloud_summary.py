#!/usr/bin/env python3
"""Summary of a Scripts/bench-cloud.sh run (benchmark only, not a test dependency).

    python3 Scripts/bench_cloud_summary.py RAWDIR [--plys RGBD.ply PY.ply] [--markdown FILE]

Reads the raw outputs bench-cloud.sh collected in RAWDIR:
    rgbd.<i>.time, py.<i>.time   `<wall seconds> <peak KiB>` (/usr/bin/time -f '%e %M')
    rgbd.<i>.err                 `timing <stage> <ms> ms` lines (rgbd cloud --timings)
    py.<i>.err                   `stage <name> <ms>` lines (baseline_cloud.py --stages)
    baseline_cloud_write.txt     `<name>_ms_runs <ms> ...` and `points <n>` lines
    rgbd-bench.txt               `bench <name> median_ms <x> runs <ms> ...` lines (--only cloud)
    rgbd-bench.err               its stderr (`... <n> points`)
    swift-version.txt, loadavg-start.txt, loadavg-end.txt   as for bench_summary.py
(with --plys, the two whole-process outputs, whose headers give the point counts)
and prints the goals (rgbd figure, baseline figure, ratio, PASS/FAIL), the per-stage
medians and the machine, date, commit and versions, as markdown; with --markdown, also
writes it to FILE. Warm-up runs are not counted. Missed goals are reported as FAIL, not as
an error; a missing or malformed input is an error. Shares its helpers with bench_summary.py.
"""

import argparse
import datetime
import platform
import re
import sys
from importlib.metadata import version
from pathlib import Path

sys.dont_write_bytecode = True  # importing the sibling script must not leave Scripts/__pycache__
from bench_summary import (  # noqa: E402
    MIB, PEAK_LIMIT_MIB, commit, goal_row, load, machine, median, ms, process_runs, stage_runs, table,
    tagged_runs)

MICRO_LIMIT_MS = 15  # issue 3: back-projection plus PLY writing of a 768×576 map in ≤ 15 ms

# (row, rgbd cloud --timings stage, baseline_cloud.py --stages stage), in pipeline order.
STAGES = [
    ("parse", "parse", "parse"),
    ("decode", "decode", "decode"),
    ("rectification maps", None, "maps"),
    ("rectify color", "rectify_color", "remap_color"),
    ("rectify depth", "rectify_depth", "remap_depth"),
    ("average colors", "average_colors", "colors"),
    ("back-project", None, "backproject"),
    ("write PLY", "write_ply", "write_ply"),
]
TOTALS = {"rgbd": "capture_total", "python": "total"}


def ply_points(path):
    """The vertex count in a PLY header, or None without a path."""
    if path is None:
        return None
    with path.open("rb") as f:
        for line in f:
            if m := re.match(rb"element vertex (\d+)", line):
                return int(m.group(1))
            if line.strip() == b"end_header":
                break
    raise SystemExit(f"bench_cloud_summary: {path}: no 'element vertex' line in the header")


def versions(raw):
    import cv2
    import numpy
    swift = (raw / "swift-version.txt").read_text().strip() if (raw / "swift-version.txt").exists() else ""
    swift = re.search(r"Swift version (\S+)", swift)
    return (f"swift {swift.group(1) if swift else 'unknown'}, python {platform.python_version()}, "
            f"numpy {numpy.__version__}, cv2 {cv2.__version__}, plyfile {version('plyfile')}, "
            f"orjson {version('orjson')}, tifffile {version('tifffile')}")


def count(value):
    return "—" if value is None else f"{value:,}"


def summary(raw, plys=(None, None)):
    rgbd_proc = process_runs(raw, "rgbd")
    py_proc = process_runs(raw, "py")
    rgbd_stages = stage_runs(raw, "rgbd", r"^timing (\S+) ([\d.]+) ms$")
    py_stages = stage_runs(raw, "py", r"^stage (\S+) ([\d.]+)$")
    micro_py = tagged_runs(raw / "baseline_cloud_write.txt", r"^(\w+)_ms_runs (.*)$")
    bench = tagged_runs(raw / "rgbd-bench.txt", r"^bench (\S+) median_ms \S+ runs (.*)$")
    for name in ["backproject_write", "backproject", "write_ply"]:
        if name not in micro_py:
            raise SystemExit(f"bench_cloud_summary: no {name}_ms_runs line in {raw / 'baseline_cloud_write.txt'}")
    for name in ["cloud_points", "cloud_write_ply", "cloud_backproject_and_write"]:
        if name not in bench:
            raise SystemExit(f"bench_cloud_summary: no 'bench {name}' line in {raw / 'rgbd-bench.txt'}")
    micro_text = (raw / "baseline_cloud_write.txt").read_text()
    micro_points = int(m.group(1)) if (m := re.search(r"^points (\d+)$", micro_text, re.M)) else None
    bench_err = (raw / "rgbd-bench.err").read_text() if (raw / "rgbd-bench.err").exists() else ""
    bench_points = int(m.group(1)) if (m := re.search(r"(\d+) points$", bench_err, re.M)) else None

    both, numpy_both = median(bench["cloud_backproject_and_write"]), median(micro_py["backproject_write"])
    rgbd_wall, py_wall = median([w for w, _ in rgbd_proc]), median([w for w, _ in py_proc])
    rgbd_peak, py_peak = median([p for _, p in rgbd_proc]), median([p for _, p in py_proc])
    goals = [
        goal_row("1. back-projection + binary PLY, 768×576 (rgbd-bench `cloud_backproject_and_write` "
                 "vs numpy + plyfile)", ms(both), ms(numpy_both), numpy_both / both,
                 f"rgbd ≤ {MICRO_LIMIT_MS} ms", both <= MICRO_LIMIT_MS),
        goal_row("2a. whole process, wall (`rgbd cloud` vs `baseline_cloud.py`)",
                 f"{rgbd_wall:.2f} s", f"{py_wall:.2f} s", py_wall / rgbd_wall, "≥ 3×", py_wall >= 3 * rgbd_wall),
        goal_row("2b. whole process, peak RSS (`/usr/bin/time %M`)",
                 f"{rgbd_peak / MIB:.0f} MiB", f"{py_peak / MIB:.0f} MiB", py_peak / rgbd_peak,
                 f"rgbd < {PEAK_LIMIT_MIB} MiB", rgbd_peak < PEAK_LIMIT_MIB * MIB),
    ]

    stage_rows = [[row, ms(median(rgbd_stages.get(r, []))) if r else "—", ms(median(py_stages.get(p, []))) if p else "—"]
                  for row, r, p in STAGES]
    known_rgbd = {r for _, r, _ in STAGES} | {TOTALS["rgbd"]}
    known_py = {p for _, _, p in STAGES} | {TOTALS["python"]}
    stage_rows += [[s, ms(median(v)), "—"] for s, v in rgbd_stages.items() if s not in known_rgbd]
    stage_rows += [[s, "—", ms(median(v))] for s, v in py_stages.items() if s not in known_py]
    stage_rows.append(["total (in-process)", ms(median(rgbd_stages.get(TOTALS["rgbd"], []))),
                       ms(median(py_stages.get(TOTALS["python"], []))) + " (after imports)"])
    stage_rows.append(["whole process, wall", ms(rgbd_wall * 1000), ms(py_wall * 1000)])
    stage_rows.append(["whole process, peak RSS", f"{rgbd_peak / MIB:.0f} MiB", f"{py_peak / MIB:.0f} MiB"])
    stage_rows.append(["points written", count(ply_points(plys[0])), count(ply_points(plys[1]))])

    micro_rows = [
        ["colors (+ point selection in rgbd)", "`cloud_points`", ms(median(bench["cloud_points"])),
         ms(median(micro_py["backproject"])) + " (colors + back-projection)"],
        ["write binary PLY", "`cloud_write_ply`", ms(median(bench["cloud_write_ply"])),
         ms(median(micro_py["write_ply"]))],
        ["both (goal 1)", "`cloud_backproject_and_write`", ms(both), ms(numpy_both)],
        ["points written", "", count(bench_points), count(micro_points)],
    ]

    runs = len(rgbd_proc)
    lines = [
        "# rgbd cloud benchmark",
        "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- commit: {commit()}",
        f"- machine: {machine()}",
        f"- versions: {versions(raw)}",
        "- input: generated 4032×3024 JPEG (quality 92) + 768×576 depth JSON "
        "(`rgbd-synth --color-noise 6 --depth-noise 0.002`); default options (edges dropped, binary PLY)",
        f"- load average: {load(raw)}",
        f"- medians of {runs} timed runs each (after one untimed warm-up); whole processes interleaved",
        "",
        "## Goals",
        "",
        *table(["goal", "rgbd", "baseline", "baseline / rgbd", "target", "result"], goals),
        "",
        "## Stages (median ms)",
        "",
        *table(["stage", "rgbd cloud --timings", "baseline_cloud.py --stages"], stage_rows),
        "",
        "- `rgbd cloud` decodes the JPEG on one thread while the other parses the JSON and rectifies the depth map, so its stages add up to",
        "  more than its total. It computes source positions during rectification (no maps).",
        "- rgbd's `average colors` is the whole `PointCloud` construction (footprint averaging plus",
        "  point selection with the edge filter); positions are computed while the PLY is streamed,",
        "  so rgbd's `write PLY` includes the back-projection. Python's `colors` is the registration",
        "  shift plus `cv2.resize` INTER_AREA; its `back-project` includes its edge filter.",
        "",
        "## Back-projection + PLY writing, 768×576 (in-process, warm, alone)",
        "",
        *table(["part", "rgbd-bench", "rgbd", "numpy + plyfile (baseline_cloud_write.py)"], micro_rows),
        "",
        "- Both start from the same rectified capture (rgbd: in memory from `Capture.load` +",
        "  `rectified()`; Python: the outputs of one `rgbd rectify`, loaded untimed) and write a",
        "  binary PLY beside it (staged or temporary, removed untimed).",
        "- rgbd averages colors over footprints centered on each depth pixel and drops edge points",
        "  (default options); the numpy baseline does a plain INTER_AREA resize and keeps every valid",
        "  pixel, so it writes more points and does less work per point.",
        "",
        "Runs (wall seconds): rgbd " + " ".join(f"{w:.2f}" for w, _ in rgbd_proc)
        + "; python " + " ".join(f"{w:.2f}" for w, _ in py_proc),
    ]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("raw", type=Path, help="directory of raw outputs from bench-cloud.sh")
    ap.add_argument("--plys", type=Path, nargs=2, metavar=("RGBD_PLY", "PY_PLY"), default=(None, None),
                    help="the whole-process outputs, for their point counts")
    ap.add_argument("--markdown", type=Path, metavar="FILE", help="also write the summary to FILE")
    args = ap.parse_args()
    text = summary(args.raw, args.plys)
    sys.stdout.write(text)
    if args.markdown:
        args.markdown.write_text(text)


if __name__ == "__main__":
    main()
