#!/usr/bin/env python3
"""The benchmark's one summary: the Markdown tables of a results file.

    ./Scripts/bench.sh --summary [RESULTS.jsonl] [--write]
    python3 Scripts/bench/summary.py [RESULTS.jsonl] [--write]      (default: the latest)

Reads bench-results/<time>.jsonl (Scripts/bench/run.py writes it; its first line holds the
cases as they were run, goals included) and prints, per case: the goals (rgbd's figure, the
baseline's, the figure judged, the target, PASS/FAIL), the whole processes (wall, CPU,
peak RSS: median and range), the in-process stages (medians, ms; sizes), and, for a run
--against another revision, every figure of the rgbd steps new against old. Writes the
same beside the results (.md). With --write, also puts each case's tables into
BENCHMARKS.md, between the lines `<!-- bench.sh:begin CASE -->` and
`<!-- bench.sh:end CASE -->` (a case without them is only printed).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import statistics
import sys
from pathlib import Path

sys.dont_write_bytecode = True
import cases as casefile  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "BENCHMARKS.md"
MIB = 1024 * 1024


def latest(folder: Path) -> Path | None:
    found = sorted(folder.glob("*.jsonl"))
    return found[-1] if found else None


# ---- figures ----------------------------------------------------------------------------

class Figures:
    """The measurements of one case, by (step, build)."""

    def __init__(self, case: casefile.Case, records: list[dict]):
        self.case = case
        self.records = records

    def _of(self, step: str, build: str | None) -> list[dict]:
        s = self.case.steps[step]
        want = (build or "new") if s.per_build else None
        return [r for r in self.records if r["step"] == step and r.get("build") == want
                and r["type"] == s.kind and not r.get("warmup")]

    def process(self, step, build, metric) -> list[float]:
        out = []
        for r in self._of(step, build):
            if metric == "wall":
                out.append(r["wall_s"])
            elif metric == "cpu":
                out.append(r["user_s"] + r["sys_s"])
            elif metric == "rss":
                out.append(r["maxrss_bytes"] / MIB)
        return out

    def stage_runs(self, step, build) -> dict[str, list[float]]:
        """{stage: [ms ...]}: pooled runs of a stages step, or one value per iteration of a
        process step's `timing` lines."""
        pooled: dict[str, list[float]] = {}
        for r in self._of(step, build):
            if r["type"] == "stages":
                for name, runs in r["stages_ms"].items():
                    pooled.setdefault(name, []).extend(runs)
            else:
                for name, ms in r.get("timings_ms", {}).items():
                    pooled.setdefault(name, []).append(ms)
        return pooled

    def sizes(self, step, build) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {}
        for r in self._of(step, build):
            for name, n in r.get("bytes", {}).items():
                found.setdefault(name, []).append(n)
        return found

    def notes(self, step, build) -> list[str]:
        return list(dict.fromkeys(n for r in self._of(step, build) for n in r.get("notes", [])))

    def values(self, kind, step, name, build) -> list[float]:
        if kind == "bytes":
            return [float(n) for n in self.sizes(step, build).get(name, [])]
        if name in casefile.PROCESS_METRICS:
            return self.process(step, build, name)
        return self.stage_runs(step, build).get(name, [])

    def metric(self, build):
        def get(kind, step, name):
            values = self.values(kind, step, name, build)
            return statistics.median(values) if values else None
        return get


def unit_of(expression: str) -> str:
    bare = casefile.bare_metric(expression)
    if bare is None:
        return ""
    kind, _, name = bare
    return "bytes" if kind == "bytes" else casefile.PROCESS_METRICS.get(name, "ms")


def show(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "ms":
        return f"{value:.2f} ms" if value < 10 else f"{value:.1f} ms" if value < 100 else f"{value:.0f} ms"
    if unit == "s":
        return f"{value:.3f} s"
    if unit == "MiB":
        return f"{value:.0f} MiB"
    if unit == "bytes":
        return f"{value / 1e6:.2f} MB" if value >= 100_000 else f"{value / 1e3:.1f} KB"
    if unit == "×":
        return f"{value:#.3g}".rstrip(".") + "×"
    if unit == "frames/s":
        return f"{value:.0f} frames/s"
    return f"{value:.4g}" + (f" {unit}" if unit else "")


def spread(values: list[float], unit: str) -> str:
    """`median (min–max)` of values, the range without its unit."""
    if not values:
        return "—"
    text = show(statistics.median(values), unit)
    if len(values) > 1:
        lo, hi = (show(v, unit).rsplit(" ", 1)[0] if " " in show(v, unit) else show(v, unit)
                  for v in (min(values), max(values)))
        text += f" ({lo}–{hi})"
    return text


def command(argv: list[str]) -> str:
    """A step's command as a shell would take it, placeholders unquoted."""
    return " ".join(a if re.fullmatch(r"[\w@%+=:,./{}-]+", a) else shlex.quote(a) for a in argv)


def upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return out


# ---- one case ---------------------------------------------------------------------------

def goal_cells(goal: casefile.Goal, figures: Figures, build: str):
    metric = figures.metric(build)
    rgbd = casefile.evaluate(goal.rgbd, metric)
    baseline = casefile.evaluate(goal.baseline, metric) if goal.baseline else None
    figure = casefile.evaluate(goal.figure, metric, {"rgbd": rgbd, "baseline": baseline})
    values_unit = goal.values_unit if goal.values_unit is not None else unit_of(goal.rgbd)
    baseline_unit = goal.values_unit if goal.values_unit is not None else unit_of(goal.baseline or "")
    if goal.op is None:
        result = ""
    elif figure is None:
        result = "missing"
    else:
        result = "PASS" if casefile.OPS[goal.op](figure, goal.target) else "**FAIL**"
    return show(rgbd, values_unit), show(baseline, baseline_unit), show(figure, goal.unit), result


def render_case(case: casefile.Case, records: list[dict], session: dict, against: str | None) -> list[str]:
    figures = Figures(case, [r for r in records if r.get("case") == case.name and r["type"] in ("process", "stages")])
    start = next((r for r in records if r["type"] == "case" and r["case"] == case.name), {})
    end = next((r for r in records if r["type"] == "case_end" and r["case"] == case.name), {})
    builds = ["new", "old"] if against else ["new"]
    has_process = any(s.kind == "process" for s in case.steps.values())
    has_stages = any(s.kind == "stages" for s in case.steps.values())
    how = []
    if has_process:
        how.append(f"whole processes: medians of {start.get('runs', '?')} interleaved iterations after a warm-up")
    if has_stages:
        how.append(f"in-process stages: {start.get('rounds', '?')} alternating rounds of {start.get('runs', '?')} "
                   "runs, pooled medians")
    load = (" ".join(f"{x:.2f}" for x in start.get("loadavg_start", [])) or "?",
            " ".join(f"{x:.2f}" for x in end.get("loadavg_end", [])) or "?")
    lines = [
        f"`{session['command']}`, case `{case.name}`, {start.get('time', session['time'])}; commit {session['commit']}"
        + (f", against {against}" if against else "") + f"; load average {load[0]} at the start, {load[1]} at the end.",
        f"{upper(case.what)}. {upper('; '.join(how))}.",
        f"Machine: {session['machine']}; " + ", ".join(f"{k} {v}" for k, v in session["versions"].items()) + ".",
    ]
    used = casefile.placeholders(a for s in case.steps.values() for a in s.run + list(s.env.values()))
    inputs = []
    for name, w in session.get("workloads", {}).items():
        if name in used:
            listed = w.get("files", {})
            if len(listed) > 12:
                # A scan holds thousands of frame files: folder by folder, a count and a size.
                folders: dict[str, list[float]] = {}
                for f, n in listed.items():
                    folder = f.rsplit("/", 1)[0] + "/" if "/" in f else f
                    folders.setdefault(folder if f.count("/") > 1 or f.endswith("/") else f, []).append(float(n))
                files = ", ".join(f"{f} {show(sum(ns), 'bytes')}" if len(ns) == 1 else
                                  f"{f} {len(ns)} files {show(sum(ns), 'bytes')}" for f, ns in folders.items())
            else:
                files = ", ".join(f"{f} {show(float(n), 'bytes')}" for f, n in listed.items())
            inputs.append(f"`{name}` ({files})")
    if inputs:
        lines.append("Inputs (bench-out/workloads/): " + "; ".join(inputs) + ".")
    lines.append("")
    if case.goals:
        header = ["goal", "rgbd", "baseline", "figure", "target", "result"]
        if against:
            header += ["rgbd, old", "figure, old", "result, old"]
        rows = []
        for goal in case.goals:
            cells = list(goal_cells(goal, figures, "new"))
            target = f"{casefile.OP_TEXT[goal.op]} {goal.target:g}{'' if goal.unit == '×' else ' '}{goal.unit}" \
                if goal.op else "(not a goal)"
            row = [goal.what, cells[0], cells[1], cells[2], target, cells[3]]
            if against:
                old = goal_cells(goal, figures, "old")
                row += [old[0], old[2], old[3]]
            rows.append(row)
        lines += table(header, rows) + [""]

    units = [(s, b) for s in case.steps.values() for b in (builds if s.per_build else [None])]
    label = lambda s, b: f"`{s.name}`" + (f" ({b})" if b and against else "")
    process_rows = []
    for s, b in units:
        if s.kind != "process":
            continue
        process_rows.append([label(s, b), f"`{command(s.run)}`", spread(figures.process(s.name, b, "wall"), "s"),
                             spread(figures.process(s.name, b, "cpu"), "s"),
                             spread(figures.process(s.name, b, "rss"), "MiB")])
    if process_rows:
        lines += table(["whole process", "command", "wall, median (range)", "CPU user + sys", "peak RSS"],
                       process_rows) + [""]

    columns = [(s, b) for s, b in units if figures.stage_runs(s.name, b) or figures.sizes(s.name, b)]
    if columns:
        names = list(dict.fromkeys(n for s, b in columns for n in list(figures.stage_runs(s.name, b))
                                   + list(figures.sizes(s.name, b))))
        rows = []
        for name in names:
            row = [f"`{name}`"]
            for s, b in columns:
                runs, sizes = figures.stage_runs(s.name, b).get(name), figures.sizes(s.name, b).get(name)
                cell = show(statistics.median(runs), "ms") if runs else ""
                if sizes:
                    size = show(float(sizes[-1]), "bytes") + ("" if len(set(sizes)) == 1 else " (varied)")
                    cell = f"{cell}, {size}" if cell else size
                row.append(cell or "—")
            rows.append(row)
        lines += table(["stage (median ms; bytes)"] + [label(s, b) for s, b in columns], rows) + [""]

    notes = [f"{label(s, b)}: {n}" for s, b in units for n in figures.notes(s.name, b)]
    if notes:
        lines += [f"- {n}" for n in notes] + [""]

    if against:
        rows = []
        for s in case.steps.values():
            if not s.per_build:
                continue
            metrics = []
            if s.kind == "process":
                metrics += [("metric", m, u) for m, u in casefile.PROCESS_METRICS.items()]
            stage_names = dict.fromkeys(list(figures.stage_runs(s.name, "new")) + list(figures.stage_runs(s.name, "old")))
            metrics += [("metric", n, "ms") for n in stage_names]
            size_names = dict.fromkeys(list(figures.sizes(s.name, "new")) + list(figures.sizes(s.name, "old")))
            metrics += [("bytes", n, "bytes") for n in size_names]
            for kind, name, unit in metrics:
                new, old = figures.values(kind, s.name, name, "new"), figures.values(kind, s.name, name, "old")
                ratio = statistics.median(new) / statistics.median(old) if new and old and statistics.median(old) else None
                overlap = "—" if not (new and old) else "yes" if min(new) <= max(old) and min(old) <= max(new) else "no"
                what = f"bytes({name})" if kind == "bytes" else name
                rows.append([f"`{s.name}.{what}`", spread(new, unit), spread(old, unit),
                             "—" if ratio is None else f"{ratio:.3f}", overlap])
        lines += table(["figure", "new, median (range)", f"old {against}, median (range)", "new / old",
                        "ranges overlap"], rows) + [""]
    return lines


# ---- a results file ---------------------------------------------------------------------

def read(path: Path) -> tuple[dict, list[dict]]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not records or records[0].get("type") != "session":
        raise SystemExit(f"summary: {path}: not a results file of Scripts/bench/run.py")
    return records[0], records


def render(path: Path) -> dict[str, list[str]]:
    """{case: its lines} for the cases of the results file, in the order run."""
    session, records = read(path)
    parsed = casefile.parse({"cases": session["cases"]}, str(path), check_placeholders=False)
    ran = [r["case"] for r in records if r["type"] == "case"]
    blocks = {}
    for name in ran:
        case = parsed.cases[name]
        heading = f"#### {case.section}: `{name}`"
        blocks[name] = [heading, ""] + render_case(case, records, session, session.get("against"))
    if not any(r["type"] == "end" for r in records):
        for name in blocks:
            blocks[name].append("(The run did not finish: these figures are partial.)")
    return blocks


def write_benchmarks(blocks: dict[str, list[str]], source: Path):
    text = BENCHMARKS.read_text(encoding="utf-8")
    for name, lines in blocks.items():
        begin, end = f"<!-- bench.sh:begin {name} -->", f"<!-- bench.sh:end {name} -->"
        pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.S)
        if not pattern.search(text):
            print(f"summary: BENCHMARKS.md has no block for case {name} ({begin}); not written there", file=sys.stderr)
            continue
        body = "\n".join(lines[2:]).rstrip()  # without the heading: the block sits under its section
        body += f"\n\n(Written by `./Scripts/bench.sh --summary {source.relative_to(REPO) if REPO in source.parents else source} --write`.)"
        text = pattern.sub(lambda _: f"{begin}\n{body}\n{end}", text, count=1)
    BENCHMARKS.write_text(text, encoding="utf-8")
    print(f"summary: wrote the tables of {', '.join(blocks)} into BENCHMARKS.md", file=sys.stderr)


def main_for(path: Path, write: bool = False):
    path = path.resolve()
    blocks = render(path)
    text = "\n".join(line for lines in blocks.values() for line in lines + [""])
    sys.stdout.write(text)
    path.with_suffix(".md").write_text(text, encoding="utf-8")
    print(f"summary: {path.with_suffix('.md')}", file=sys.stderr)
    if write:
        write_benchmarks(blocks, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="?", type=Path, help="a results file (default: the latest in bench-results/)")
    ap.add_argument("--write", action="store_true", help="also write the tables into BENCHMARKS.md")
    args = ap.parse_args()
    path = args.results or latest(REPO / "bench-results")
    if path is None:
        raise SystemExit("summary: no results in bench-results/")
    main_for(path, args.write)


if __name__ == "__main__":
    main()
