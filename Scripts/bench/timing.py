"""The benchmark's one way of timing a whole process: wall time, CPU time and peak RSS of
the child, from the kernel's accounting of it (wait4), with no shell or timing program in
between. Also the one parser of the lines in-process timings print."""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass

# ru_maxrss is in KiB on Linux, in bytes on macOS.
_RSS_BYTES = 1 if sys.platform == "darwin" else 1024


@dataclass
class Process:
    """One finished child: how it ended and what it cost."""
    status: int          # exit code, or -signal
    wall_s: float        # from just before the spawn to the reaping
    user_s: float
    sys_s: float
    maxrss_bytes: int    # peak resident set size

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s


def run(argv: list[str], env: dict[str, str], stdout: str, stderr: str) -> Process:
    """Runs argv (looked up on PATH if it has no slash) with standard input from /dev/null
    and standard output and error into the files `stdout` and `stderr`, waits for it, and
    returns its costs."""
    fds = [os.open(os.devnull, os.O_RDONLY),
           os.open(stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
           os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
    try:
        actions = [(os.POSIX_SPAWN_DUP2, fd, target) for fd, target in zip(fds, (0, 1, 2))]
        start = time.perf_counter()
        pid = os.posix_spawnp(argv[0], argv, env, file_actions=actions)
        _, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - start
    finally:
        for fd in fds:
            os.close(fd)
    return Process(os.waitstatus_to_exitcode(status), wall, usage.ru_utime, usage.ru_stime,
                   usage.ru_maxrss * _RSS_BYTES)


_BENCH = re.compile(r"^bench (\S+) median_ms \S+ runs(( \S+)*)\s*$")
_BYTES = re.compile(r"^bytes (\S+) (\d+)\s*$")
_TIMING = re.compile(r"^timing (\S+) ([0-9.]+) ms\s*$")


def parse_stages(text: str) -> tuple[dict[str, list[float]], dict[str, int], list[str]]:
    """The in-process figures a stages program printed (rgbd-bench's format, which the
    baselines print too): {stage: [ms of each run]}, {name: bytes}, and its `# note` lines."""
    stages: dict[str, list[float]] = {}
    sizes: dict[str, int] = {}
    notes: list[str] = []
    for line in text.splitlines():
        if m := _BENCH.match(line):
            stages.setdefault(m.group(1), []).extend(float(x) for x in m.group(2).split())
        elif m := _BYTES.match(line):
            sizes[m.group(1)] = int(m.group(2))
        elif line.startswith("# "):
            notes.append(line[2:].strip())
    return stages, sizes, notes


def parse_timings(text: str) -> dict[str, float]:
    """{stage: ms} of the `timing NAME MS ms` lines of a whole process's standard error
    (rgbd --timings; the Python baselines' --stages)."""
    return {m.group(1): float(m.group(2)) for line in text.splitlines() if (m := _TIMING.match(line))}
