"""`normbench ab`: base against head in one job. Every latency and block case is timed impl@base vs
impl@head in paired, shuffled rounds in k fresh processes, beside an A/A of head against a second build of
itself; the A/A's spread S bounds the ratio, and the mark (+ - = ? x) is an equivalence test against
--factor. The marks, and why both sides share one process: docs/methodology.md, "Notes from the code"."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import median

from normbench.ab.timing import STATS
from normbench.benches import get_bench
from normbench.core.case import Case
from normbench.timing.fresh import package_parent, run_fresh  # noqa: F401  (package_parent: ab/run.py)


@dataclass
class ABOptions:
    factor: float = 1.1
    processes: int = 5
    stat: str = "paired"  # which of ab/timing.py's STATS decides
    threads: int | None = None
    base_python: str | None = None  # another interpreter for the base side: alternating processes
    # Each case's rounds in ab: 20 rounds of 1 ms samples (the suite's own samples and floors are for a
    # stored run's answer; ab repeats the case in k processes instead, and must fit a CI budget)
    rounds: int = 20
    min_sample_s: float = 1e-3


def timing_params(params: dict, opts: ABOptions) -> dict:
    """A case's parameters with ab's rounds and sample length."""
    out = {**params, "samples": opts.rounds, "min_sample_s": opts.min_sample_s}
    if "min_run_s" in out:
        out["min_run_s"] = 0.0
    return out


@dataclass
class ABCase:
    case_id: str
    kind: str
    case: str  # norm:impl and the parameters that tell it apart
    ratio: float = math.nan  # head over base: the median over processes of the chosen statistic
    lo: float = math.nan  # the smallest and largest per-process value
    hi: float = math.nan
    aa: float = math.nan  # head' over head, the same way
    spread: float = math.nan  # the case's A/A spread S: its ratio is known within ×/÷ S (about 95%)
    mark: str = "x"
    note: str = ""
    per_process: dict[str, list[float]] = field(default_factory=dict)  # statistic -> per process


@dataclass
class ABResult:
    base: str
    base_commit: str
    head: str
    mode: str  # "in-process" or "processes"
    factor: float
    stat: str
    processes: int
    aa_spread: float  # the median of the cases' A/A spreads
    max_spread: float  # the largest
    cases: list[ABCase]
    wall_s: float
    deterministic: list[dict] = field(default_factory=list)  # compare's records of the other benches
    deterministic_exit: int = 0

    def to_json(self) -> dict:
        return asdict(self)


def timed_cases(cases: list[Case]) -> list[Case]:
    """The cases ab times side by side: those of benches that can (Bench.times_sides)."""
    return [c for c in cases if get_bench(c.kind).times_sides]


def run_workers(cases, *, root: Path, tree: Path | None, opts: ABOptions, say: Callable[[str], None]):
    """[(side, records by case id)] for each process, one after another (never two timing at once), each a
    fresh process of timing/fresh.py."""
    plan_cases = [
        {"case_id": c.case_id, "kind": c.kind, "norm": c.norm, "impl": c.impl, "params": c.params}
        for c in cases
    ]
    sides = _sides(opts)
    out = []
    for i, (side, python) in enumerate(sides):
        plan = {
            "root": str(root),
            "tree": str(tree) if tree else None,
            "seed": 1000 + i,
            "threads": opts.threads,
            "cases": plan_cases,
        }
        say(
            f"process {i + 1}/{len(sides)}"
            + (f" ({side})" if opts.base_python else "")
            + f": {len(cases)} cases"
        )
        done = run_fresh("normbench.ab.worker", plan, python=python)
        if done.died:
            raise RuntimeError(f"ab process {i + 1} ({python}): {done.reason}")
        out.append((side, {r["case_id"]: r for r in done.lines}))
    return out


def _sides(opts: ABOptions) -> list[tuple[str, str]]:
    """In-process mode: k processes of this interpreter. --base-python: k rounds in ABBA order (head, base,
    base, head, ...), so neither side always runs first and neighbours in time pair up."""
    if not opts.base_python:
        return [("both", sys.executable)] * opts.processes
    order = []
    for r in range(opts.processes):
        pair = [("head", sys.executable), ("base", opts.base_python)]
        order += pair if r % 2 == 0 else pair[::-1]
    return order


Z = 2.0  # the per-case interval: ratio ×/÷ exp(Z · standard error of the median over the processes)


def judge(
    cases: list[Case], labels: dict[str, str], runs, opts: ABOptions
) -> tuple[list[ABCase], float, float]:
    """Per case: the ratio (median over processes), its A/A spread S (how far the median of k processes
    moves between two builds of the same code: from the spread of the per-process ratios head/base and
    head'/head, and the A/A's own offset), and the mark from the interval ratio ×/÷ S. Returns the cases,
    the job's A/A spread (the median S over the cases) and the largest S."""
    out = []
    for c in cases:
        row = ABCase(c.case_id, c.kind, labels[c.case_id])
        values, aa, problem = _per_process(c.case_id, runs, opts)
        if problem:
            row.mark, row.note = problem
        elif values.get(opts.stat):
            xs = values[opts.stat]
            row.ratio, row.lo, row.hi = median(xs), min(xs), max(xs)
            row.aa = median(aa) if aa else math.nan
            row.spread = case_spread(xs, aa)
            row.per_process = {**values, "aa": aa}
            row.mark = _mark(row.ratio, row.spread, opts.factor)
            if row.mark == "?":
                row.note = f"×{row.ratio:.3f} ×/÷ its A/A spread ×{row.spread:.3f} straddles --factor {opts.factor:g}"
        out.append(row)
    spreads = sorted(r.spread for r in out if r.spread == r.spread)
    typical = median(spreads) if spreads else math.inf
    return out, typical, (spreads[-1] if spreads else math.inf)


def case_spread(ab: list[float], aa: list[float]) -> float:
    """S >= 1: the pooled spread of log(head/base) and log(head'/head) over the processes gives the standard
    error of a median of k (1.2533 σ/√k); S = exp(Z · that), or the A/A's own offset if that is larger (two
    builds of the same code that differ are this case's bias, not noise that averages out)."""
    k = len(ab)
    if k < 2 or len(aa) < 2:
        return math.inf
    logs_ab, logs_aa = [math.log(v) for v in ab], [math.log(v) for v in aa]
    var = (_var(logs_ab) + _var(logs_aa)) / 2
    se = 1.2533 * math.sqrt(var / k)
    offset = abs(math.log(median(aa)))
    return math.exp(max(Z * se, offset))


def _var(xs: list[float]) -> float:
    m = sum(xs) / len(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def _mark(ratio: float, spread: float, factor: float) -> str:
    lower, upper = ratio / spread, ratio * spread
    if lower > factor:
        return "+"
    if upper < 1 / factor:
        return "-"
    if upper < factor and lower > 1 / factor:
        return "="
    return "?"


def _per_process(case_id: str, runs, opts: ABOptions):
    """{stat: [value per process or pair]}, [A/A values], and (mark, note) when the case was not timed."""
    records = [r.get(case_id) for _, r in runs]
    if any(r is None for r in records):
        return {}, [], ("x", "missing from a process's output")
    errors = [r["error"] for r in records if "error" in r]
    if errors:
        if all(r.get("unavailable") for r in records):  # on both sides, in every process
            return {}, [], ("=", "unavailable on both sides: " + errors[0])
        return {}, [], ("x", errors[0])
    if not opts.base_python:
        values = {s: [r["ab"][s] for r in records] for s in STATS}
        return values, [r["aa"][opts.stat] for r in records], None
    # --base-python: process pairs (head, base) of each ABBA round; A/A = neighbours of the same side
    mins = [(side, r[case_id]["head_min_s"]) for side, r in runs]
    rounds = [mins[i : i + 2] for i in range(0, len(mins), 2)]
    ratios = [dict(p)["head"] / dict(p)["base"] for p in rounds]
    aa = [mins[i][1] / mins[i + 1][1] for i in range(1, len(mins) - 1, 2)]
    return {"min": ratios}, aa, None


def exit_code(result: ABResult) -> int:
    marks = {c.mark for c in result.cases}
    if "+" in marks or result.deterministic_exit == 1:
        return 1
    if marks & {"?", "x"} or result.deterministic_exit == 3 or not result.cases:
        return 3
    return 0


def finite(value):
    """JSON holds numbers: NaN and infinities become null (Python's json writes tokens no parser reads)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value
