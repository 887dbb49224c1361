"""Benchmarks/cases.toml: loading, checking, placeholders, and the goals' expressions.

The file's own header says what it holds; this module only reads it. Nothing here knows a
case, a step or a goal by name."""

from __future__ import annotations

import ast
import operator
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

# Placeholders that name the build under test: a step using one is an rgbd step.
BUILD_PLACEHOLDERS = {"rgbd", "rgbd_bench", "library", "package"}
# Every other built-in placeholder.
OTHER_PLACEHOLDERS = {"rgbd_synth", "python", "repo", "scripts", "out", "runs", "round"}
# The SwiftPM product each executable or library placeholder needs.
PRODUCTS = {"rgbd": "rgbd", "rgbd_bench": "rgbd-bench", "rgbd_synth": "rgbd-synth",
            "library": "RGBDKit", "package": "RGBDKit"}
KINDS = ("process", "stages")
OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
OP_TEXT = {"<": "<", "<=": "≤", ">": ">", ">=": "≥"}
# Process metrics (seconds, seconds, MiB); any other attribute of a step is a stage (ms).
PROCESS_METRICS = {"wall": "s", "cpu": "s", "rss": "MiB"}

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class CaseError(Exception):
    pass


def placeholders(strings) -> set[str]:
    return {m.group(1) for s in strings for m in _PLACEHOLDER.finditer(s)}


def expand(text: str, values: dict[str, str]) -> str:
    def one(m):
        if m.group(1) not in values:
            raise CaseError(f"no value for {{{m.group(1)}}} in {text!r}")
        return str(values[m.group(1)])
    return _PLACEHOLDER.sub(one, text)


@dataclass
class Workload:
    name: str
    what: str
    make: list[list[str]]
    needs: list[str]

    def uses(self) -> set[str]:
        return placeholders(a for command in self.make for a in command)


@dataclass
class Step:
    name: str
    kind: str
    run: list[str]
    env: dict[str, str]
    max_runs: int | None
    max_rounds: int | None

    def uses(self) -> set[str]:
        return placeholders(self.run) | placeholders(self.env.values())

    @property
    def per_build(self) -> bool:
        """Whether the step runs the build under test (with --against: each build)."""
        return bool(self.uses() & BUILD_PLACEHOLDERS)


@dataclass
class Goal:
    what: str
    rgbd: str
    baseline: str | None
    figure: str
    op: str | None
    target: float | None
    unit: str
    values_unit: str | None


@dataclass
class Case:
    name: str
    section: str
    what: str
    groups: list[str]
    default: bool
    runs: int
    rounds: int
    steps: dict[str, Step]
    goals: list[Goal] = field(default_factory=list)

    def uses(self) -> set[str]:
        return set().union(*(s.uses() for s in self.steps.values()))


@dataclass
class Cases:
    path: Path
    workloads: dict[str, Workload]
    cases: dict[str, Case]
    raw: dict

    def select(self, names: list[str]) -> list[Case]:
        """The cases named (by name or group), in the file's order; the default ones if none."""
        if not names:
            return [c for c in self.cases.values() if c.default]
        unknown = [n for n in names if n not in self.cases and not any(n in c.groups for c in self.cases.values())]
        if unknown:
            groups = sorted({g for c in self.cases.values() for g in c.groups})
            raise CaseError(f"no case or group {', '.join(unknown)} (cases: {', '.join(self.cases)}; "
                            f"groups: {', '.join(groups)})")
        return [c for c in self.cases.values() if c.name in names or set(c.groups) & set(names)]

    def workloads_for(self, used: set[str]) -> list[Workload]:
        """The workloads named in `used`, with what they need, needed ones first."""
        order: list[str] = []

        def visit(name):
            if name in order:
                return
            for need in self.workloads[name].needs:
                visit(need)
            order.append(name)
        for name in sorted(used & set(self.workloads)):
            visit(name)
        return [self.workloads[n] for n in order]


def _expect(cond, where, text):
    if not cond:
        raise CaseError(f"{where}: {text}")


def load(path: Path) -> Cases:
    with open(path, "rb") as f:
        raw = tomllib.load(f)
    return parse(raw, str(path))


def parse(raw: dict, where: str, check_placeholders: bool = True) -> Cases:
    """The cases and workloads of a cases file's contents (`raw`, as tomllib reads it).
    Without check_placeholders (a results file's copy of its cases, which has no
    workloads), the commands' placeholders are not checked."""
    path = where
    defaults = raw.get("defaults", {})
    workloads = {}
    for name, w in raw.get("workloads", {}).items():
        where = f"{path}: workloads.{name}"
        _expect(name.isidentifier(), where, "a workload's name is an identifier (it is a placeholder)")
        _expect(name not in BUILD_PLACEHOLDERS | OTHER_PLACEHOLDERS, where, "the name of a built-in placeholder")
        _expect(isinstance(w.get("make"), list) and all(isinstance(c, list) and c for c in w["make"]), where,
                "`make` is a list of commands (lists of strings)")
        workloads[name] = Workload(name, w.get("what", ""), w["make"], w.get("needs", []))
    for w in workloads.values():
        where = f"{path}: workloads.{w.name}"
        for need in w.needs:
            _expect(need in workloads, where, f"needs an unknown workload {need}")
        unknown = w.uses() - BUILD_PLACEHOLDERS - OTHER_PLACEHOLDERS - set(workloads)
        _expect(not unknown, where, f"unknown placeholders {sorted(unknown)}")
        _expect(not (w.uses() & {"out", "runs", "round"}), where, "{out}, {runs} and {round} belong to steps")
        for other in w.uses() & set(workloads):
            _expect(other == w.name or other in w.needs, where, f"uses {{{other}}} without `needs = [\"{other}\"]`")

    cases = {}
    for name, c in raw.get("cases", {}).items():
        where = f"{path}: cases.{name}"
        steps = {}
        for step_name, s in c.get("steps", {}).items():
            sw = f"{where}.steps.{step_name}"
            _expect(step_name.isidentifier(), sw, "a step's name is an identifier (goals name it)")
            _expect(s.get("kind") in KINDS, sw, f"kind is one of {KINDS}")
            _expect(isinstance(s.get("run"), list) and s["run"] and all(isinstance(a, str) for a in s["run"]), sw,
                    "`run` is a command (a list of strings)")
            step = Step(step_name, s["kind"], s["run"], dict(s.get("env", {})), s.get("max_runs"), s.get("max_rounds"))
            if check_placeholders:
                unknown = step.uses() - BUILD_PLACEHOLDERS - OTHER_PLACEHOLDERS - set(workloads)
                _expect(not unknown, sw, f"unknown placeholders {sorted(unknown)}")
            _expect(not (step.kind == "process" and "round" in step.uses()), sw, "{round} is for stages steps")
            steps[step_name] = step
        _expect(steps, where, "has no steps")
        goals = []
        for i, g in enumerate(c.get("goals", []), 1):
            gw = f"{where}.goals[{i}]"
            _expect("rgbd" in g and "figure" in g and "what" in g, gw, "needs what, rgbd and figure")
            _expect(("op" in g) == ("target" in g), gw, "op and target go together")
            _expect(g.get("op") is None or g["op"] in OPS, gw, f"op is one of {list(OPS)}")
            goal = Goal(g["what"], g["rgbd"], g.get("baseline"), g["figure"], g.get("op"), g.get("target"),
                        g.get("unit", ""), g.get("values_unit"))
            for expression, names in ((goal.rgbd, ()), (goal.baseline, ()), (goal.figure, ("rgbd", "baseline"))):
                if expression is not None:
                    try:
                        check(expression, steps, names)
                    except CaseError as e:
                        raise CaseError(f"{gw}: {e}") from None
            goals.append(goal)
        cases[name] = Case(name, c.get("section", name), c.get("what", ""), list(c.get("groups", [])),
                           bool(c.get("default", True)), int(c.get("runs", defaults.get("runs", 7))),
                           int(c.get("rounds", defaults.get("rounds", 5))), steps, goals)
    return Cases(Path(path), workloads, cases, raw)


# ---- expressions: numbers, + - * /, parentheses, STEP.METRIC, bytes(STEP.STAGE), and in
# a figure the names rgbd and baseline.

def _parse(expression: str) -> ast.expr:
    try:
        return ast.parse(expression, mode="eval").body
    except SyntaxError as e:
        raise CaseError(f"cannot read {expression!r}: {e.msg}") from None


def _walk(node, leaf):
    """Evaluates `node`, calling leaf(kind, a, b) for metrics ('metric'/'bytes', step, name)
    and names ('name', name, None); None propagates (a figure that is missing)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _walk(node.operand, leaf)
        return None if v is None else -v
    if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Sub, ast.Mult, ast.Div):
        a, b = _walk(node.left, leaf), _walk(node.right, leaf)
        if a is None or b is None:
            return None
        if isinstance(node.op, ast.Div):
            return a / b if b else None
        return {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}[type(node.op)](a, b)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return leaf("metric", node.value.id, node.attr)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "bytes"
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Attribute)
            and isinstance(node.args[0].value, ast.Name)):
        return leaf("bytes", node.args[0].value.id, node.args[0].attr)
    if isinstance(node, ast.Name):
        return leaf("name", node.id, None)
    raise CaseError(f"not a figure: {ast.unparse(node)!r} (numbers, + - * /, STEP.METRIC, bytes(STEP.STAGE))")


def check(expression: str, steps: dict[str, Step], names=()):
    def leaf(kind, a, b):
        if kind == "name":
            if a not in names:
                raise CaseError(f"{expression!r}: unknown name {a}")
        elif a not in steps:
            raise CaseError(f"{expression!r}: no step {a}")
        return 1.0
    _walk(_parse(expression), leaf)


def evaluate(expression: str, metric: Callable[[str, str, str], float | None],
             names: dict[str, float | None] | None = None) -> float | None:
    """The value of `expression`; metric(kind, step, name) gives the metrics."""
    def leaf(kind, a, b):
        if kind == "name":
            return (names or {}).get(a)
        return metric(kind, a, b)
    return _walk(_parse(expression), leaf)


def bare_metric(expression: str) -> tuple[str, str, str] | None:
    """(kind, step, name) if the expression is one metric alone, else None."""
    node = _parse(expression)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return ("metric", node.value.id, node.attr)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "bytes" and node.args:
        arg = node.args[0]
        if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name):
            return ("bytes", arg.value.id, arg.attr)
    return None
