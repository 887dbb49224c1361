#!/usr/bin/env python3
"""The benchmark driver (run by Scripts/bench.sh, in the repository's .venv).

    ./Scripts/bench.sh [CASE|GROUP ...] [--runs N] [--rounds N] [--against REV] [--fresh] [--write]
    ./Scripts/bench.sh --list
    ./Scripts/bench.sh --summary [RESULTS.jsonl] [--write]

Runs the cases of Benchmarks/cases.toml (all default cases if none is named): builds the
working tree's rgbd (release, in .build-bench), with --against REV also REV's (exported with
`git archive` into .build-against/<commit>/, built there), makes the workloads once into
bench-out/workloads/, runs every case's steps with their baselines in the same run, appends
every measurement to bench-results/<UTC time>.jsonl as it is taken, and prints the summary
(Scripts/bench/summary.py; also written beside the results as .md). --write also puts the
summary's tables into BENCHMARKS.md (between the case's generated-block markers).

Whole processes are timed by Scripts/bench/timing.py (wall, CPU, peak RSS from wait4);
in-process stages by the programs themselves (rgbd-bench and the baselines print
`bench NAME median_ms X runs ...`). Exits non-zero if a command fails; a missed goal is a
FAIL in the summary, not an error.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

sys.dont_write_bytecode = True  # the sibling modules must not leave Scripts/bench/__pycache__
import cases as casefile  # noqa: E402
import summary  # noqa: E402
import timing  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "Scripts"
CASES = REPO / "Benchmarks" / "cases.toml"
OUT = REPO / "bench-out"
WORKLOADS = OUT / "workloads"
SCRATCH = OUT / "scratch"
RESULTS = REPO / "bench-results"
AGAINST = REPO / ".build-against"
BASELINE_PACKAGES = ["numpy", "opencv-python-headless", "orjson", "tifffile", "plyfile", "pillow", "pillow-heif"]


def say(text: str):
    print(f"== {text}", file=sys.stderr, flush=True)


def fail(text: str):
    print(f"bench: {text}", file=sys.stderr)
    sys.exit(1)


def command_output(*args, cwd=REPO) -> str:
    try:
        return subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def loadavg() -> list[float]:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return list(os.getloadavg())


# ---- builds -----------------------------------------------------------------------------

class Build:
    """A release build of rgbd: the working tree's ("new") or another revision's ("old")."""

    def __init__(self, label: str, source: Path, scratch: Path, commit: str):
        self.label, self.source, self.scratch, self.commit = label, source, scratch, commit
        self.bin: Path | None = None

    def make(self, products: set[str]):
        base = ["swift", "build", "-c", "release", "--package-path", str(self.source), "--scratch-path", str(self.scratch)]
        for product in sorted(products):
            say(f"building {product} (release) of {self.label} ({self.commit}) in {self.scratch.relative_to(REPO)}")
            if subprocess.run(base + ["--product", product], stdout=sys.stderr).returncode != 0:
                fail(f"swift build --product {product} of {self.label} failed")
        self.bin = Path(subprocess.run(base + ["--show-bin-path"], capture_output=True, text=True, check=True).stdout.strip())

    def values(self) -> dict[str, str]:
        library = self.bin / ("libRGBDKit.dylib" if sys.platform == "darwin" else "libRGBDKit.so")
        return {"rgbd": str(self.bin / "rgbd"), "rgbd_bench": str(self.bin / "rgbd-bench"),
                "rgbd_synth": str(self.bin / "rgbd-synth"), "library": str(library),
                "package": str(self.source / "python")}


def head_commit() -> str:
    head = command_output("git", "rev-parse", "--short=12", "HEAD") or "unknown"
    dirty = command_output("git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no")
    return head + (" with uncommitted changes" if dirty else "")


def resolve(rev: str) -> str:
    commit = command_output("git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if not commit:
        fail(f"--against {rev}: not a commit of this repository")
    return commit


def against_build(rev: str, commit: str) -> Build:
    """REV exported with `git archive` into .build-against/<commit>/src (once; no worktree
    to register or remove) and built in .build-against/<commit>/build."""
    folder = AGAINST / commit[:12]
    source = folder / "src"
    if not (source / "Package.swift").exists():
        say(f"exporting {rev} ({commit[:12]}) into {source.relative_to(REPO)}")
        shutil.rmtree(source, ignore_errors=True)
        source.mkdir(parents=True)
        archive = subprocess.Popen(["git", "archive", "--format=tar", commit], cwd=REPO, stdout=subprocess.PIPE)
        extract = subprocess.run(["tar", "-x", "-C", str(source)], stdin=archive.stdout)
        archive.stdout.close()
        if archive.wait() != 0 or extract.returncode != 0:
            shutil.rmtree(source, ignore_errors=True)
            fail(f"could not export {rev}")
        # The same dependency versions as the working tree's build (Package.resolved is not tracked).
        if (REPO / "Package.resolved").exists():
            shutil.copy2(REPO / "Package.resolved", source / "Package.resolved")
    return Build("old", source, folder / "build", commit[:12] + f" ({rev})")


# ---- workloads --------------------------------------------------------------------------

def repo_files(argv: list[str]) -> list[Path]:
    """The repository files (scripts, checked-in photographs) a command names, outside the
    folders the benchmark writes."""
    found = []
    for arg in argv:
        path = Path(arg)
        if path.is_absolute() and path.is_file() and REPO in path.parents and OUT not in path.parents \
                and not any(part.startswith(".build") for part in path.relative_to(REPO).parts):
            found.append(path)
    return found


def make_workloads(workloads, values: dict[str, str], fresh: bool) -> dict:
    """Makes (or reuses) each workload; returns {name: key} for the results."""
    keys = {}
    for w in workloads:
        folder = WORKLOADS / w.name
        commands = [[casefile.expand(a, values) for a in c] for c in w.make]
        digest = hashlib.sha256(json.dumps([w.make, [keys[n] for n in w.needs]]).encode())
        for command in commands:
            for path in repo_files(command):
                digest.update(path.relative_to(REPO).as_posix().encode() + hashlib.sha256(path.read_bytes()).digest())
        key = digest.hexdigest()[:16]
        keys[w.name] = key
        stamp = folder / ".key"
        if not fresh and stamp.exists() and stamp.read_text().strip() == key:
            continue
        say(f"making workload {w.name} into {folder.relative_to(REPO)} (kept for later runs): {w.what}")
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for command in commands:
            result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if result.returncode != 0:
                sys.stderr.write(result.stderr)
                fail(f"workload {w.name}: failed: {shlex.join(command)}")
        stamp.write_text(key + "\n")
    return keys


# ---- running ----------------------------------------------------------------------------

class Session:
    """The results file: one JSON object per line, written as measurements are taken."""

    def __init__(self, path: Path):
        self.path = path
        self.file = open(path, "a", encoding="utf-8")

    def write(self, record: dict):
        self.file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.file.flush()


def step_units(case, builds: list[Build]):
    """(step, build) pairs: rgbd steps with each build, baselines once (build None)."""
    units = []
    for step in case.steps.values():
        if step.per_build:
            units += [(step, b) for b in builds]
        else:
            units.append((step, None))
    return units


def run_unit(case, step, build, new: Build, common: dict, iteration: int | str, runs: int, session: Session,
             kind_record: dict):
    build_values = (build or new).values()
    label = build.label if build else None
    folder = SCRATCH / case.name / (step.name + (f"@{label}" if label and label != "new" else ""))
    out = folder / "out"
    out.mkdir(parents=True, exist_ok=True)
    values = dict(common, **build_values, out=str(out), runs=str(runs),
                  round=str(iteration if isinstance(iteration, int) else 0))
    argv = [casefile.expand(a, values) for a in step.run]
    env = dict(os.environ)
    env.update({k: casefile.expand(v, values) for k, v in step.env.items()})
    stdout, stderr = folder / "stdout.txt", folder / "stderr.txt"
    result = timing.run(argv, env, str(stdout), str(stderr))
    if result.status != 0:
        sys.stderr.write(stderr.read_text(errors="replace")[-4000:])
        fail(f"{case.name}.{step.name}{f' ({label})' if label else ''} exited with {result.status}: {shlex.join(argv)}")
    record = {"type": step.kind, "case": case.name, "step": step.name, "build": label,
              **kind_record, "wall_s": round(result.wall_s, 6), "user_s": round(result.user_s, 6),
              "sys_s": round(result.sys_s, 6), "maxrss_bytes": result.maxrss_bytes}
    if step.kind == "process":
        record["timings_ms"] = timing.parse_timings(stderr.read_text(errors="replace"))
    else:
        stages, sizes, notes = timing.parse_stages(stdout.read_text(errors="replace"))
        if not stages and not sizes:
            fail(f"{case.name}.{step.name}: printed no `bench` or `bytes` line: {shlex.join(argv)}")
        record.update(stages_ms=stages, bytes=sizes, notes=notes, runs=runs)
    session.write(record)
    return result


def run_case(case, builds: list[Build], common: dict, runs_override, rounds_override, session: Session):
    runs = runs_override or case.runs
    rounds = rounds_override or case.rounds
    shutil.rmtree(SCRATCH / case.name, ignore_errors=True)
    session.write({"type": "case", "case": case.name, "runs": runs, "rounds": rounds, "loadavg_start": loadavg(),
                   "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")})
    new = builds[0]
    units = step_units(case, builds)
    process = [(s, b) for s, b in units if s.kind == "process"]
    stages = [(s, b) for s, b in units if s.kind == "stages"]
    if process:
        names = ", ".join(f"{s.name}" + (f"@{b.label}" if b and len(builds) > 1 else "") for s, b in process)
        say(f"{case.name}: whole processes ({names}): a warm-up each, then {runs} interleaved iterations")
        for s, b in process:
            run_unit(case, s, b, new, common, "warmup", runs, session, {"iteration": 0, "warmup": True})
        for i in range(1, runs + 1):
            for s, b in (process if i % 2 else process[::-1]):
                run_unit(case, s, b, new, common, i, runs, session, {"iteration": i, "warmup": False})
    if stages:
        names = ", ".join(f"{s.name}" + (f"@{b.label}" if b and len(builds) > 1 else "") for s, b in stages)
        say(f"{case.name}: in-process stages ({names}): {rounds} alternating rounds of {runs} runs")
        for r in range(1, rounds + 1):
            for s, b in (stages if r % 2 else stages[::-1]):
                if s.max_rounds is not None and r > s.max_rounds:
                    continue
                step_runs = min(runs, s.max_runs) if s.max_runs else runs
                run_unit(case, s, b, new, common, r, step_runs, session, {"round": r})
    session.write({"type": "case_end", "case": case.name, "loadavg_end": loadavg(),
                   "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")})


def machine() -> str:
    model = next((line.split(":", 1)[1].strip() for line in command_output("lscpu").splitlines()
                  if line.startswith("Model name:")), platform.processor() or "unknown CPU")
    memory = ""
    try:
        kib = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        memory = f", {kib / 1024 / 1024:.1f} GiB RAM"
    except (OSError, AttributeError):
        pass
    return f"{model}, {os.cpu_count()} processors{memory}, {platform.system()} {platform.release()}"


def versions() -> dict[str, str]:
    found = {"swift": (re.search(r"Swift version (\S+)", command_output("swift", "--version")) or [None, "?"])[1],
             "python": platform.python_version()}
    for package in BASELINE_PACKAGES:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return found


def list_cases(cases: casefile.Cases):
    for case in cases.cases.values():
        flags = ([f"groups {', '.join(case.groups)}"] if case.groups else []) + ([] if case.default else ["not by default"])
        print(f"{case.name}  ({case.section}; runs {case.runs}, rounds {case.rounds}"
              + "".join(f"; {f}" for f in flags) + ")")
        for step in case.steps.values():
            print(f"    {step.kind:7} {step.name}{' [rgbd]' if step.per_build else ''}: {shlex.join(step.run)}")
        for goal in case.goals:
            target = f" {casefile.OP_TEXT[goal.op]} {goal.target:g}" if goal.op else " (reported, not judged)"
            print(f"    goal: {goal.what}: {goal.figure}{target}")


def main(argv: list[str]):
    ap = argparse.ArgumentParser(prog="./Scripts/bench.sh", description="Runs the benchmarks of Benchmarks/cases.toml.",
                                 epilog="Results: bench-results/<UTC time>.jsonl (+ .md, the summary).")
    ap.add_argument("cases", nargs="*", metavar="CASE", help="cases or groups to run (default: every default case)")
    ap.add_argument("--runs", type=int, help="whole-process iterations and in-process runs (default: each case's)")
    ap.add_argument("--rounds", type=int, help="alternating rounds of the in-process steps (default: each case's)")
    ap.add_argument("--against", metavar="REV", help="also build REV and run every rgbd step with both builds, interleaved")
    ap.add_argument("--fresh", action="store_true", help="remake the workloads")
    ap.add_argument("--write", action="store_true", help="also write the summary's tables into BENCHMARKS.md")
    ap.add_argument("--list", action="store_true", help="list the cases, their steps and goals")
    ap.add_argument("--summary", nargs="?", const="latest", metavar="RESULTS",
                    help="only summarize a results file (default: the latest)")
    ap.add_argument("--scratch-path", default=".build-bench", help="SwiftPM build folder of the working tree")
    args = ap.parse_args(argv)
    try:
        cases = casefile.load(CASES)
        selected = cases.select(args.cases)
    except casefile.CaseError as e:
        fail(str(e))
    if args.list:
        list_cases(cases)
        return
    if args.summary:
        path = summary.latest(RESULTS) if args.summary == "latest" else Path(args.summary)
        if path is None:
            fail(f"no results in {RESULTS.relative_to(REPO)}/")
        summary.main_for(path, write=args.write)
        return
    if (args.runs is not None and args.runs < 1) or (args.rounds is not None and args.rounds < 1):
        fail("--runs and --rounds take a positive number")

    used = set().union(*(c.uses() for c in selected))
    workloads = cases.workloads_for(used)
    workload_uses = set().union(*(w.uses() for w in workloads)) if workloads else set()
    against = resolve(args.against) if args.against else None
    new = Build("new", REPO, (REPO / args.scratch_path).resolve(), head_commit())
    new.make({casefile.PRODUCTS[p] for p in (used | workload_uses) if p in casefile.PRODUCTS})
    builds = [new]
    if args.against:
        old = against_build(args.against, against)
        per_build = set().union(*(s.uses() for c in selected for s in c.steps.values() if s.per_build))
        old.make({casefile.PRODUCTS[p] for p in per_build if p in casefile.PRODUCTS})
        builds.append(old)

    python = sys.executable
    common = {"python": python, "repo": str(REPO), "scripts": str(SCRIPTS)}
    for w in cases.workloads.values():
        common[w.name] = str(WORKLOADS / w.name)
    keys = make_workloads(workloads, dict(common, **new.values()), args.fresh)

    RESULTS.mkdir(exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    path = RESULTS / f"{started.strftime('%Y%m%dT%H%M%SZ')}.jsonl"
    session = Session(path)
    session.write({
        "type": "session", "time": started.isoformat(timespec="seconds"),
        "command": "./Scripts/bench.sh" + ("" if not argv else " " + shlex.join(argv)),
        "commit": new.commit, "against": builds[1].commit if len(builds) > 1 else None,
        "machine": machine(), "versions": versions(), "loadavg_start": loadavg(),
        "cases": {c.name: cases.raw["cases"][c.name] for c in selected},
        "workloads": {w.name: {"what": w.what, "key": keys[w.name], "files": {
            f.relative_to(WORKLOADS / w.name).as_posix(): f.stat().st_size
            for f in sorted((WORKLOADS / w.name).rglob("*")) if f.is_file() and f.name != ".key"}} for w in workloads},
    })
    say(f"results: {path.relative_to(REPO)}")
    start = time.monotonic()
    for case in selected:
        run_case(case, builds, common, args.runs, args.rounds, session)
    session.write({"type": "end", "loadavg_end": loadavg(), "seconds": round(time.monotonic() - start, 1)})
    session.file.close()
    summary.main_for(path, write=args.write)


if __name__ == "__main__":
    main(sys.argv[1:])
