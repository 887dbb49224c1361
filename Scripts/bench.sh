#!/usr/bin/env bash
# The benchmarks: every case of Benchmarks/cases.toml (what runs, on what input, against
# which baseline, the goal) run by one driver, Scripts/bench/run.py, in the repository's
# .venv with the baselines' packages (Scripts/requirements-bench.txt). BENCHMARKS.md says
# what they measure and what they gave.
#
#   ./Scripts/bench.sh                          every default case
#   ./Scripts/bench.sh rectify cloud            some cases (or groups: png, png-more)
#   ./Scripts/bench.sh frames --runs 5 --rounds 2
#   ./Scripts/bench.sh rectify --against HEAD~1 also REV's build, both in the same run
#   ./Scripts/bench.sh --list                   the cases, their commands and goals
#   ./Scripts/bench.sh --summary [FILE] [--write]   the tables of a results file (and into BENCHMARKS.md)
#
# Builds in .build-bench (and .build-against/<commit>/ for --against), makes its inputs
# once into bench-out/workloads/, writes bench-results/<UTC time>.jsonl and .md. A command
# that fails stops it with a non-zero status; a missed goal is a FAIL in the summary.
set -euo pipefail
cd "$(dirname "$0")/.."

./Scripts/bootstrap.sh --python
# shellcheck source=Scripts/common.sh
source Scripts/common.sh
use_venv Scripts/requirements-bench.txt
exec "$py" Scripts/bench/run.py "$@"
