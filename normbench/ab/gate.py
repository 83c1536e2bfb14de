"""`normbench ab`: base against head in one job. Every latency and block case is timed impl@base vs
impl@head in paired, shuffled rounds in k fresh processes, beside an A/A of head against a second build of
itself; the A/A's spread S bounds the ratio, and the mark (+ - = ? x) is an equivalence test against
--factor (core/verdicts.py). The marks, and why both sides share one process: docs/ci.md, "normbench ab"."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import median

from normbench.ab.options import ABOptions
from normbench.benches import get_bench
from normbench.core.case import Case
from normbench.core.errors import NormbenchError
from normbench.core.verdicts import INCONCLUSIVE, PASS, REGRESSION
from normbench.timing.fresh import run_fresh


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
    name: str = ""  # norm:impl (the bench's own label when it has no norm)
    params: dict = field(default_factory=dict)  # the parameters that differ from the bench's defaults
    base_s: float = math.nan  # the median over processes of each side's fastest sample (seconds per call)
    head_s: float = math.nan
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
    second_look: int = 0  # the cases re-timed in k more processes because k left them ? (0: none)

    def to_json(self) -> dict:
        return asdict(self)


def timed_cases(cases: list[Case]) -> list[Case]:
    """The cases ab times side by side: those of benches that can (Bench.times_sides)."""
    return [c for c in cases if get_bench(c.kind).times_sides]


def run_workers(
    cases, *, root: Path, tree: Path | None, opts: ABOptions, pages: str | None, say: Callable[[str], None]
):
    """[(side, records by case id)] for each process, one after another (never two timing at once), each a
    fresh process of timing/fresh.py in the page state `pages` (ab/worker.py applies it before torch)."""
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
            "pages": pages,
            "cases": plan_cases,
        }
        say(
            f"process {i + 1}/{len(sides)}"
            + (f" ({side})" if opts.base_python else "")
            + f": {len(cases)} cases"
        )
        done = run_fresh("normbench.ab.worker", plan, python=python)
        if done.died:
            raise NormbenchError(f"ab process {i + 1} ({python}): {done.reason}")
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


SAME_CODE = "the same norm code at base and head: not timed"


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
            row.base_s, row.head_s = _side_times(c.case_id, runs, opts)
            row.mark = _mark(row.ratio, row.spread, opts.factor)
            if row.mark == "?":
                row.note = f"×{row.ratio:.3f} ×/÷ its A/A spread ×{row.spread:.3f} straddles --factor {opts.factor:g}"
        out.append(row)
    return (out, *spread_summary(out))


def judge_with_second_look(cases, labels, runs, opts: ABOptions, retime) -> tuple[list[ABCase], int]:
    """judge(), then the second look: the cases left ? are timed again by `retime(cases)` (k more processes:
    run_workers) and judged on all 2k, once. Returns the rows and how many cases were looked at again."""
    rows, _, _ = judge(cases, labels, runs, opts)
    unsure = [c for c, row in zip(cases, rows, strict=True) if row.mark == "?"]
    if not unsure or not opts.second_look:
        return rows, 0
    more = retime(unsure)
    again = judge(unsure, labels, runs + more, opts)[0]
    by_id = {r.case_id: r for r in again}
    return [by_id.get(r.case_id, r) for r in rows], len(unsure)


def spread_summary(rows: list[ABCase]) -> tuple[float, float]:
    """The job's A/A spread (the median S over the timed cases) and the largest; NaN when none was timed."""
    spreads = sorted(r.spread for r in rows if r.spread == r.spread)
    return (median(spreads), spreads[-1]) if spreads else (math.nan, math.nan)


def case_spread(ab: list[float], aa: list[float]) -> float:
    """The case's A/A spread S (ab/spread.py, which loads numpy: not at start-up)."""
    from normbench.ab.spread import case_spread as spread

    return spread(ab, aa)


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
    if not opts.base_python:  # each process: the median of its per-round ratios (ab/timing.py)
        return {opts.stat: [r["ab"] for r in records]}, [r["aa"] for r in records], None
    # --base-python: process pairs (head, base) of each ABBA round; A/A = neighbours of the same side
    mins = [(side, r[case_id]["head_min_s"]) for side, r in runs]
    rounds = [mins[i : i + 2] for i in range(0, len(mins), 2)]
    ratios = [dict(p)["head"] / dict(p)["base"] for p in rounds]
    aa = [mins[i][1] / mins[i + 1][1] for i in range(1, len(mins) - 1, 2)]
    return {"min": ratios}, aa, None


def _side_times(case_id: str, runs, opts: ABOptions) -> tuple[float, float]:
    """(base, head): the median over processes of each side's fastest sample of the case."""
    if opts.base_python:  # each process is one side; its "head" is that interpreter's build
        by_side = {
            s: [r[case_id].get("head_min_s") for side, r in runs if side == s] for s in ("base", "head")
        }
    else:
        by_side = {s: [r[case_id].get(f"{s}_min_s") for _, r in runs] for s in ("base", "head")}
    got = [[t for t in by_side[s] if t is not None] for s in ("base", "head")]
    return tuple(median(v) if v else math.nan for v in got)


def exit_code(result: ABResult) -> int:
    marks = {c.mark for c in result.cases}
    if "+" in marks or result.deterministic_exit == REGRESSION:
        return REGRESSION
    if marks & {"?", "x"} or result.deterministic_exit == INCONCLUSIVE or not result.cases:
        return INCONCLUSIVE
    return PASS
