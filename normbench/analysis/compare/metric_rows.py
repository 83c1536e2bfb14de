"""One compare metric of one bench kind, in three steps: group (match each side's cases and settle what
can be settled row by row), pool (what the rows say together: the batched tests, the round sets' shifts,
the run-to-run noise) and mark (each judged row against --factor, its test and that noise)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from normbench.analysis.compare.groups import MetricGroup, metric_groups
from normbench.analysis.compare.noise import MIN_CASES, Noise, run_to_run_noise, smallest_p, z_score
from normbench.analysis.compare.options import CompareOptions
from normbench.analysis.compare.round_sets import judge_against_round_sets, shift_note
from normbench.analysis.compare.values import (
    Untestable,
    hashes,
    mann_whitney_p,
    median,
    process_test,
    run_medians,
    settle_not_finite,
)
from normbench.analysis.rows import CompareRow, describe_case

if TYPE_CHECKING:
    from normbench.core.tolerance import Tolerance


@dataclass
class Envs:
    timing: list[str]  # differences that make times incomparable
    numeric: list[str]  # differences that may change deterministic values
    busy: dict[tuple[str, str], str]
    paired: list[str]  # differences that make paired ratios incomparable (not load, not the machine's name)


@dataclass
class Sides:
    """One bench kind's rows of each side, and what every metric of it reads."""

    base: pd.DataFrame
    new: pd.DataFrame
    base_data: dict[str, frozenset]  # case_id -> SHA-256s of its training text
    new_data: dict[str, frozenset]
    varying: frozenset[str]  # parameters that differ among the cases shown together


@dataclass
class Judged:
    """A row that reaches the marks, with what they read."""

    row: CompareRow
    runs_base: list[float]  # one median per run
    runs_new: list[float]
    tolerance: Tolerance | None  # None for a timing metric
    test: tuple[int, int, float] | None  # (n base, n new, the smallest p the test can give), when tested
    noise_class: str = ""  # timing rows judged against one run-to-run noise share a class (noise_class)


@dataclass
class Grouped:
    """One metric's rows after the grouping step."""

    rows: list[CompareRow] = field(default_factory=list)  # every row, in group key order
    judged: list[Judged] = field(default_factory=list)
    tests: list[tuple[CompareRow, list[float], list[float]]] = field(default_factory=list)  # p in one batch
    in_sets: list[tuple[CompareRow, str | None, str | None]] = field(default_factory=list)  # paired ratios


def metric_rows(
    kind, metric, direction, sides: Sides, bench, opts: CompareOptions, envs: Envs
) -> tuple[list[CompareRow], list[Noise], Untestable]:
    """(rows, run-to-run noises, cases no test could judge) of one metric of one bench kind: the noise of
    each class of rows that has an estimate, its main class first."""
    grouped = group(kind, metric, direction, sides, bench, envs)
    main = main_class(grouped.judged)
    noises = pool(grouped, kind, metric, opts, main)
    untestable = mark(grouped.judged, noises, main, opts, lower_is_better=direction.startswith("lower"))
    ordered = [noises.get(main)] + [n for c, n in noises.items() if c != main]
    return grouped.rows, [n for n in ordered if n is not None], untestable


def group(kind, metric, direction, sides: Sides, bench, envs: Envs) -> Grouped:
    """Match the two sides' groups of `metric`: a row each, settled here when it can be (only on one side,
    other data, values not finite, a deterministic value within its tolerance, times not comparable)."""
    gb = metric_groups(sides.base, metric, bench.compare_pool)
    gn = metric_groups(sides.new, metric, bench.compare_pool)
    out = Grouped()
    paired = metric in bench.paired_metrics
    for key in sorted(set(gb) | set(gn)):
        norm, impl, params = json.loads(key)
        label = describe_case(norm, impl, params, bench, sides.varying)
        ids = (gb[key].case_ids if key in gb else frozenset()) | (
            gn[key].case_ids if key in gn else frozenset()
        )
        if key not in gb or key not in gn:
            note = "only in " + ("new" if key in gn else "base")
            out.rows.append(CompareRow("x", kind, label, metric, note=note, case_ids=ids))
            continue
        gbk, gnk = gb[key], gn[key]
        tolerance = bench.compare_tolerance(metric, json.loads(gbk.params))
        a, b = gbk.values, gnk.values
        if direction.endswith("_abs"):  # signed errors: compare their size
            a, b = [abs(v) for v in a], [abs(v) for v in b]
        mb, mn = median(a), median(b)
        ratio = mn / mb if mb else (1.0 if mn == mb else float("inf"))
        row = CompareRow("=", kind, label, metric, mb, mn, ratio, unit=gbk.unit, case_ids=ids)
        out.rows.append(row)
        if (hb := hashes(sides.base_data, gbk)) != (hn := hashes(sides.new_data, gnk)):
            row.mark, row.note = "x", f"data differs: sha256 {_short(hb)} -> {_short(hn)}"
            continue
        if settle_not_finite(row, a, b):
            continue
        if tolerance is not None:
            if not _deterministic_differs(row, a, b, tolerance, envs):
                continue
        elif reason := _timing_not_comparable(gbk, gnk, envs, paired):
            row.mark, row.note = "x", reason
            continue
        if gbk.per_process and gnk.per_process and tolerance is None:
            test = None
            row.p, how = process_test(a, b)  # the process as the unit: values.py
            row.note = _join(row.note, how)
        else:
            test = _choose_test(row, a, b, tolerance, gbk.pooled and gnk.pooled, bench, out)
        out.judged.append(
            Judged(
                row,
                run_medians(gbk, direction),
                run_medians(gnk, direction),
                tolerance,
                test,
                noise_class(params),
            )
        )
        if paired:
            out.in_sets.append((row, gbk.round_set, gnk.round_set))
    return out


def _choose_test(row: CompareRow, a, b, tolerance, pooled: bool, bench, out: Grouped):
    """How the row's change is tested: identical values (p = 1), a case's own seeded values (the factor
    alone), a Mann-Whitney test (queued in `out.tests`: (n, n, smallest p) returned) or too few samples."""
    tested = False
    if a == b:
        row.p = 1.0  # identical values: nothing changed
    elif tolerance is not None and not pooled:
        # the same seeded inputs on both sides, value for value: no sampling noise to test against
        row.note = _join(row.note, "deterministic: factor only")
    elif len(a) >= 3 and len(b) >= 3:
        out.tests.append((row, a, b))  # p for every such row at once, in pool()
        tested = True
    else:
        row.note = _join(row.note, f"n={min(len(a), len(b))}: no test, factor only")
    if pooled:
        over = "/".join(bench.compare_pool)  # values pooled over seeds: show their spread
        spread = (
            f"sd over {over}: {pd.Series(a).std():.3g} -> {pd.Series(b).std():.3g} (n={len(a)}, {len(b)})"
        )
        row.note = _join(row.note, spread)
    return (len(a), len(b), smallest_p(a, b)) if tested else None


def pool(grouped: Grouped, kind, metric, opts: CompareOptions, main: str) -> dict[str, Noise | None]:
    """What the rows say together: each paired ratio's round-set shift, every queued test's p (one batch),
    and the run-to-run noise of the timed rows (which the shifts move), per noise class."""
    shifts = judge_against_round_sets(grouped.in_sets)
    tests = grouped.tests
    for (row, _, _), p in zip(tests, mann_whitney_p([(a, b) for _, a, b in tests]), strict=True):
        row.p = p
    timed = [j for j in grouped.judged if j.tolerance is None]
    noises: dict[str, Noise | None] = {}
    for cls in dict.fromkeys(j.noise_class for j in timed):
        rows = [(j.row, j.runs_base, j.runs_new) for j in timed if j.noise_class == cls]
        noises[cls] = run_to_run_noise(rows, f"{kind}[{cls}]" if cls else kind, metric, opts.alpha)
    if noises.get(main) is not None and shifts:
        noises[main].note = f"{noises[main].note}; {shift_note(kind, metric, shifts)}"
    return noises


def noise_class(params: dict) -> str:
    """Rows whose run-to-run noise differs in kind are judged apart: a cold-cache case's paired ratio moved
    8-9% (CV) between fresh processes on a 2-core VM, a warm case's 1.5-2% (docs/methodology.md)."""
    return "cache=cold" if params.get("cache") == "cold" else ""


def main_class(judged: list[Judged]) -> str:
    """The noise class with the most timed rows: the one the metric's noise floor is read from."""
    counts: dict[str, int] = {}
    for j in judged:
        if j.tolerance is None:
            counts[j.noise_class] = counts.get(j.noise_class, 0) + 1
    return max(counts, key=lambda c: (counts[c], c == ""), default="")


def mark(
    judged: list[Judged],
    noises: dict[str, Noise | None],
    main: str,
    opts: CompareOptions,
    *,
    lower_is_better: bool,
) -> Untestable:
    """Each judged row's mark: beyond --factor and significant (+ or -), beyond it without significance or
    within it yet changed (~), else =; a change no test here can judge is x, and so is a timing change
    beyond --factor in a class of rows too few to estimate its own run-to-run noise (a minor class: the
    main class's noise would understate it). Returns the untestable rows."""
    untestable = Untestable()
    for j in judged:
        row = j.row
        noise = noises.get(j.noise_class)
        ratio = row.judged_ratio  # beyond its round set's shift, where it has one
        worse = ratio > opts.factor if lower_is_better else ratio < 1 / opts.factor
        better = ratio < 1 / opts.factor if lower_is_better else ratio > opts.factor
        significant = row.p is None or row.p < opts.alpha
        if j.test is not None and j.test[2] >= opts.alpha:  # no p this test can give is below alpha
            untestable.add(j.test, undetectable=worse)
            if worse:  # a change of the size the gate looks for, which no test here can confirm or clear
                n_b, n_n, smallest = j.test
                row.mark = "x"
                row.note = _join(
                    row.note,
                    f"undetectable: n={n_b} vs {n_n} samples, no Mann-Whitney test reaches p < {opts.alpha:g} "
                    f"(its smallest p is {smallest:.2g})",
                )
                continue
        if j.tolerance is None and noise is None and j.noise_class != main and (worse or better):
            row.mark = "x"
            row.note = _join(
                row.note,
                f"{j.noise_class}: too few such cases to estimate their own run-to-run noise (under "
                f"{MIN_CASES}, and larger than the others'): pass several runs per side (A,B,C) or use "
                "normbench ab",
            )
            continue
        if j.tolerance is None and significant and noise and 0 < ratio < float("inf"):
            bound = noise.sigma * math.sqrt(1 / len(j.runs_base) + 1 / len(j.runs_new)) * z_score(opts.alpha)
            if abs(math.log(ratio)) <= bound:
                significant = False
                row.note = f"within run-to-run noise (|log ratio| ≤ {bound:.2f})"
        if row.shift:
            row.note = _join(row.note, f"×{ratio:.3f} beyond its round set's ×{row.shift:.3f}")
        if worse or better:
            row.mark = ("+" if worse else "-") if significant else "~"
        elif j.tolerance is not None:
            row.mark = "~"  # beyond the tolerance but within the factor: changed, not enough to gate on
        elif significant and noise and row.p is not None and ratio != 1:
            # a timing change beyond the run-to-run noise, yet within the factor: changed, below the gate
            row.mark = "~"
            row.note = _join(row.note, f"changed ×{ratio:.3f}, within --factor {opts.factor:g}")
    return untestable


def _join(note: str, more: str) -> str:
    return f"{note}; {more}" if note else more


def _deterministic_differs(row: CompareRow, a, b, tolerance, envs: Envs) -> bool:
    """Settle a deterministic metric when it can be settled here: `=` within the tolerance (False: done),
    `x` beyond it when the arithmetic may differ (False: done); True: a real difference to judge."""
    if a == b:
        row.note = "identical"
        return False
    if tolerance.all_close(a, b):
        row.note = f"within {tolerance.why}"
        return False
    if envs.numeric:
        row.mark = "x"
        row.note = (
            f"differs beyond {tolerance.why} and the arithmetic may differ ({'; '.join(envs.numeric)}): "
            "a platform change cannot be told from a code change (--allow-env FIELD to compare)"
        )
        return False
    row.note = f"beyond {tolerance.why}"
    return True


def _timing_not_comparable(group_b: MetricGroup, group_n: MetricGroup, envs: Envs, paired: bool) -> str:
    """Why two groups' times cannot be compared, or "". A paired ratio (a time over another timed in the
    same rounds) cancels the machine's speed: load and the core count do not matter to it."""
    if paired:
        return "environment differs: " + "; ".join(envs.paired) if envs.paired else ""
    if envs.timing:
        return "environment differs: " + "; ".join(envs.timing)
    loaded = [envs.busy[k] for g in (group_b, group_n) for k in g.pairs if k in envs.busy]
    return "; ".join(dict.fromkeys(loaded)) + " (--allow-load to compare)" if loaded else ""


def _short(hashes: frozenset) -> str:
    return ",".join(sorted(h[:12] for h in hashes)) or "none"
