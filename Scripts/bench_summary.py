#!/usr/bin/env python3
"""Summary of a Scripts/bench-rectify.sh run (benchmark only, not a test dependency).

    python3 Scripts/bench_summary.py RAWDIR [--markdown FILE]

Reads the raw outputs bench-rectify.sh collected in RAWDIR:
    rgbd.<i>.time, py.<i>.time   `<wall seconds> <peak KiB>` (/usr/bin/time -f '%e %M')
    rgbd.<i>.err                 `timing <stage> <ms> ms` lines (rgbd rectify --timings)
    py.<i>.err                   `stage <name> <ms>` lines (baseline_rectify.py --stages)
    baseline_remap.txt           `<name>_ms_runs <ms> ...` lines (cv2.remap, orjson.loads)
    rgbd-bench.txt               `bench <name> median_ms <x> runs <ms> ...` lines
    remap.round<i>.txt, color.round<i>.txt   the same formats, from alternating rounds of
                                 cv2.remap and rgbd's color rectification: goal 2 pools
                                 their runs (without them, it uses the two files above)
    swift-version.txt            first line of `swift --version`
    loadavg-start.txt, loadavg-end.txt   /proc/loadavg before and after the runs (optional)
and prints the goals (rgbd figure, baseline figure, ratio, PASS/FAIL), the per-stage
medians and the machine, date, commit and versions, as markdown; with --markdown, also
writes it to FILE. Warm-up runs (`*.warmup.*`) are not counted. Missed goals are reported
as FAIL, not as an error; a missing or malformed input is an error.
"""

import argparse
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
from pathlib import Path

MIB = 1024 * 1024
PEAK_LIMIT_MIB = 200

# Stage rows in pipeline order; stages not listed here are appended in the order seen.
STAGE_ORDER = [
    "parse", "decode", "maps_color", "rectify_color", "maps_depth", "rectify_depth",
    "encode_color_png", "write_color_png", "encode_depth_png", "write_depth_png",
    "write_depth_tiff", "write_intrinsics",
]
# Each tool's in-run total, shown on the `total` row.
TOTALS = {"rgbd": "capture_total", "python": "total"}


def numbered(raw, prefix, suffix):
    """Files raw/<prefix>.<n>.<suffix> of the timed runs, in run order."""
    pattern = re.compile(rf"^{re.escape(prefix)}\.(\d+)\.{re.escape(suffix)}$")
    found = sorted((int(m.group(1)), p) for p in raw.iterdir() if (m := pattern.match(p.name)))
    if not found:
        raise SystemExit(f"bench_summary: no {prefix}.<n>.{suffix} files in {raw}")
    return [p for _, p in found]


def process_runs(raw, prefix):
    """[(wall seconds, peak bytes)] of each timed whole-process run."""
    runs = []
    for path in numbered(raw, prefix, "time"):
        fields = path.read_text().split()
        if len(fields) != 2:
            raise SystemExit(f"bench_summary: {path}: expected '<seconds> <KiB>', got {fields}")
        runs.append((float(fields[0]), int(fields[1]) * 1024))
    return runs


def stage_runs(raw, prefix, pattern):
    """{stage: [ms of each run]} from the runs' stderr lines matching `pattern`."""
    stages = {}
    for path in numbered(raw, prefix, "err"):
        for line in path.read_text().splitlines():
            if m := re.match(pattern, line):
                stages.setdefault(m.group(1), []).append(float(m.group(2)))
    return stages


def tagged_runs(path, pattern):
    """{name: [ms ...]} from lines of `path` where `pattern` captures the name and the runs."""
    out = {}
    for line in path.read_text().splitlines():
        if m := re.match(pattern, line):
            out[m.group(1)] = [float(x) for x in m.group(2).split()]
    return out


def rounds(raw):
    """Runs pooled over the alternating rounds: {name: [ms ...]} for rectify_color,
    rectify_color_into (color.round<i>.txt) and remap, remap_into (remap.round<i>.txt);
    empty if there were no rounds."""
    pooled = {}
    for path in sorted(raw.glob("color.round*.txt")):
        for name, runs in tagged_runs(path, r"^bench (\S+) median_ms \S+ runs (.*)$").items():
            pooled.setdefault(name, []).extend(runs)
    for path in sorted(raw.glob("remap.round*.txt")):
        for name, runs in tagged_runs(path, r"^(\w+)_ms_runs (.*)$").items():
            pooled.setdefault(name, []).extend(runs)
    return pooled


def median(values):
    return statistics.median(values) if values else None


def ms(value):
    return "—" if value is None else f"{value:.1f} ms" if value < 100 else f"{value:.0f} ms"


def table(header, rows):
    """A markdown table with padded columns (readable as plain text too)."""
    cells = [header] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]

    def line(row):
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |"
    return [line(cells[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in cells[1:]]


def goal_row(goal, rgbd, baseline, ratio, target, passed):
    return [goal, rgbd, baseline, f"{ratio:.2f}×", target, "PASS" if passed else "FAIL"]


def command(*args):
    try:
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def machine():
    model = next((line.split(":", 1)[1].strip() for line in command("lscpu").splitlines()
                  if line.startswith("Model name:")), platform.processor() or "unknown CPU")
    meminfo = Path("/proc/meminfo")
    memory = "unknown memory"
    if meminfo.exists():
        kib = int(re.search(r"MemTotal:\s+(\d+)", meminfo.read_text()).group(1))
        memory = f"{kib / MIB:.1f} GiB RAM"
    return f"{model}, nproc {command('nproc') or os.cpu_count()}, {memory}"


def commit():
    head = command("git", "rev-parse", "--short", "HEAD") or "unknown"
    changes = command("git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no")
    return f"{head} (with uncommitted changes)" if changes else head


def versions(raw):
    import cv2
    import numpy
    import orjson
    swift = (raw / "swift-version.txt").read_text().strip() if (raw / "swift-version.txt").exists() else ""
    swift = re.search(r"Swift version (\S+)", swift)
    return (f"swift {swift.group(1) if swift else 'unknown'}, python {platform.python_version()}, "
            f"numpy {numpy.__version__}, cv2 {cv2.__version__}, orjson {orjson.__version__}")


def load(raw):
    """The 1-minute load average before and after the runs, if recorded."""
    values = [(raw / f"loadavg-{when}.txt") for when in ("start", "end")]
    if not all(p.exists() and p.read_text().split() for p in values):
        return "not recorded"
    before, after = (p.read_text().split()[0] for p in values)
    return f"{before} before, {after} after (1-minute averages; work beyond the benchmark's own skews the figures)"


def summary(raw):
    rgbd_proc = process_runs(raw, "rgbd")
    py_proc = process_runs(raw, "py")
    rgbd_stages = stage_runs(raw, "rgbd", r"^timing (\S+) ([\d.]+) ms$")
    py_stages = stage_runs(raw, "py", r"^stage (\S+) ([\d.]+)$")
    baselines = tagged_runs(raw / "baseline_remap.txt", r"^(\w+)_ms_runs (.*)$")
    bench = tagged_runs(raw / "rgbd-bench.txt", r"^bench (\S+) median_ms \S+ runs (.*)$")
    for name, source in [("remap", "baseline_remap.txt"), ("orjson", "baseline_remap.txt")]:
        if name not in baselines:
            raise SystemExit(f"bench_summary: no {name}_ms_runs line in {raw / source}")
    for name in ["parse", "rectify_color"]:
        if name not in bench:
            raise SystemExit(f"bench_summary: no 'bench {name}' line in {raw / 'rgbd-bench.txt'}")

    parse, orjson_ms = median(bench["parse"]), median(baselines["orjson"])
    pooled = rounds(raw)
    rect_runs = pooled.get("rectify_color") or bench["rectify_color"]
    remap_runs = pooled.get("remap") or baselines["remap"]
    rect, remap = median(rect_runs), median(remap_runs)
    rect_into, remap_into = median(pooled.get("rectify_color_into", [])), median(pooled.get("remap_into", []))
    rgbd_wall, py_wall = median([w for w, _ in rgbd_proc]), median([w for w, _ in py_proc])
    rgbd_peak, py_peak = median([p for _, p in rgbd_proc]), median([p for _, p in py_proc])
    goals = [
        goal_row("1. depth JSON parse (rgbd-bench `parse` vs `orjson.loads`)",
                 ms(parse), ms(orjson_ms), orjson_ms / parse, "≥ 1×", parse <= orjson_ms),
        goal_row("2. rectify 4032×3024 RGB, positions included (`rectify_color` vs `cv2.remap`, 2 threads"
                 + (f"; {len(rect_runs)} and {len(remap_runs)} runs pooled from alternating rounds)" if pooled else ")"),
                 ms(rect), ms(remap), remap / rect, "≥ 1×", rect <= remap),
        goal_row("3a. whole process, wall (`rgbd rectify` vs `baseline_rectify.py`)",
                 f"{rgbd_wall:.2f} s", f"{py_wall:.2f} s", py_wall / rgbd_wall, "≥ 3×", py_wall >= 3 * rgbd_wall),
        goal_row("3b. whole process, peak RSS (`/usr/bin/time %M`)",
                 f"{rgbd_peak / MIB:.0f} MiB", f"{py_peak / MIB:.0f} MiB", py_peak / rgbd_peak,
                 f"rgbd < {PEAK_LIMIT_MIB} MiB", rgbd_peak < PEAK_LIMIT_MIB * MIB),
    ]

    names = [s for s in STAGE_ORDER if s in rgbd_stages or s in py_stages or s in bench]
    seen = list(rgbd_stages) + list(py_stages)
    names += [s for s in dict.fromkeys(seen) if s not in names and s not in TOTALS.values()]
    stage_rows = [[s, ms(median(rgbd_stages.get(s, []))), ms(median(bench.get(s, []))),
                   ms(median(py_stages.get(s, [])))] for s in names]
    stage_rows.append(["total (in-process)", ms(median(rgbd_stages.get(TOTALS["rgbd"], []))), "—",
                       ms(median(py_stages.get(TOTALS["python"], []))) + " (after imports)"])
    stage_rows.append(["whole process, wall", ms(rgbd_wall * 1000), "—", ms(py_wall * 1000)])
    stage_rows.append(["whole process, peak RSS", f"{rgbd_peak / MIB:.0f} MiB", "—", f"{py_peak / MIB:.0f} MiB"])

    on_the_fly, with_map = median(bench.get("rectify_color", [])), median(bench.get("rectify_color_map", []))
    serial, build = median(bench.get("rectify_color_serial", [])), median(bench.get("map_build", []))
    options = [
        ["positions on the fly, parallel (`rectify_color`, what `rgbd rectify` does)", ms(on_the_fly)],
        ["positions on the fly, serial (`rectify_color_serial`)",
         ms(serial) + (f" (parallel is {serial / on_the_fly:.2f}× faster)" if serial and on_the_fly else "")],
        ["build a map (`map_build`)", ms(build)],
        ["with a prebuilt map (`rectify_color_map`)", ms(with_map)],
        ["`cv2.remap`, fixed-point maps prebuilt, 2 threads", ms(remap)],
    ]
    if on_the_fly and with_map and build:
        saved = on_the_fly - with_map
        verdict = (f"a cached map saves {saved:.1f} ms/image, costs {build:.1f} ms once and 4 B/pixel "
                   f"(pays off from {build / saved:.1f} images on)"
                   if saved > 0 else f"a cached map saves nothing ({-saved:.1f} ms slower per image)")
        options.append(["verdict", verdict])

    runs = len(rgbd_proc)
    lines = [
        "# rgbd rectify benchmark",
        "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- commit: {commit()}",
        f"- machine: {machine()}",
        f"- versions: {versions(raw)}",
        f"- input: generated 4032×3024 JPEG (quality 92) + 768×576 depth JSON "
        f"(`rgbd-synth --color-noise 6 --depth-noise 0.002`)",
        f"- load average: {load(raw)}",
        f"- medians of {runs} timed runs each (after one untimed warm-up); whole processes interleaved",
        "",
        "## Goals",
        "",
        *table(["goal", "rgbd", "baseline", "baseline / rgbd", "target", "result"], goals),
        *([""] + [f"Goal 2 without fresh output memory (both into one preallocated buffer, pooled rounds): "
                  f"rgbd `rectify_color_into` {ms(rect_into)}, `cv2.remap(dst=)` {ms(remap_into)} "
                  f"({remap_into / rect_into:.2f}×)."] if rect_into and remap_into else []),
        "",
        "## Stages (median ms)",
        "",
        *table(["stage", "rgbd rectify --timings", "rgbd-bench (warm, alone)", "baseline_rectify.py --stages"],
               stage_rows),
        "",
        "- `rgbd rectify` decodes the JPEG (then touches the color output's memory) on one thread while",
        "  the other parses the JSON, rectifies the depth map and writes the depth files, so its stages",
        "  add up to more than its total.",
        "- python's `write_*_png` include PNG encoding (cv2.imwrite); rgbd's `write_*` are the file",
        "  writes alone. Python builds its maps (`maps_*`) apart; rgbd computes positions during rectification.",
        "- rgbd-bench `parse` includes reading the file; `orjson.loads` is timed on bytes already read.",
        "",
        "## Color rectification options (rgbd-bench, 4032×3024)",
        "",
        *table(["variant", "median"], options),
        "",
        "Runs (wall seconds): rgbd " + " ".join(f"{w:.2f}" for w, _ in rgbd_proc)
        + "; python " + " ".join(f"{w:.2f}" for w, _ in py_proc),
    ]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("raw", type=Path, help="directory of raw outputs from bench-rectify.sh")
    ap.add_argument("--markdown", type=Path, metavar="FILE", help="also write the summary to FILE")
    args = ap.parse_args()
    text = summary(args.raw)
    sys.stdout.write(text)
    if args.markdown:
        args.markdown.write_text(text)


if __name__ == "__main__":
    main()
