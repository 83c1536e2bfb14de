"""Two runs' rows compared, asv-style, per bench compare metric: cases matched by case_id (or, for metrics
pooled over seeds, by their parameters without the seed), each marked

    +  worse and significant      -  better and significant     ~  beyond the factor, not significant
    =  compared: unchanged        !  status regressed (ok -> failed/diverged/stuck)
    x  not comparable (the note says why)

Every case of either run is accounted for; how each kind of metric is judged: docs/methodology.md."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import pandas as pd

from normbench.analysis.compare.case_rows import status_rows, uncovered_rows
from normbench.analysis.compare.comparability import (
    busy_cases,
    numeric_differences,
    paired_differences,
    timing_differences,
)
from normbench.analysis.compare.groups import MetricGroup, data_hashes, metric_groups
from normbench.analysis.compare.noise import Noise, run_to_run_noise, smallest_p, z_score
from normbench.analysis.compare.round_sets import (
    confirm_across_references,
    judge_against_round_sets,
    shift_note,
)
from normbench.analysis.compare.values import (
    Untestable,
    hashes,
    mann_whitney_p,
    median,
    run_medians,
    settle_not_finite,
)
from normbench.analysis.rows import CompareRow, describe_case, varying_params
from normbench.benches import all_benches
from normbench.core.settings import check_number

MARKS = {
    "+": "worse",
    "-": "better",
    "~": "changed, not significant",
    "=": "unchanged",
    "!": "status regressed",
    "x": "not comparable",
}


@dataclass
class CompareOptions:
    """What decides a change; every number is checked when the options are made (nan, 0 or a negative
    alpha would switch the gate off: refused, one line)."""

    factor: float = 1.1
    alpha: float = 0.002
    allow_env: set[str] = field(default_factory=set)  # environment fields allowed to differ
    allow_load: bool = False  # compare cases timed while the load exceeded the core count
    absolute: bool = False  # also gate the benches' absolute times (Bench.absolute_metrics)

    def __post_init__(self) -> None:
        check_number(self.factor, "--factor", above=1.0)
        check_number(self.alpha, "--alpha", above=0.0, below=1.0)


@dataclass
class Comparison:
    rows: list[CompareRow]
    notes: list[str]  # the run-to-run noise each timing metric was judged against
    # why the gate cannot answer: a noise floor above --factor, changes no test at this sample size can flag
    undetectable: list[str]


def compare_frames(
    base: pd.DataFrame, new: pd.DataFrame, base_env: dict, new_env: dict, opts: CompareOptions
) -> Comparison:
    benches = all_benches()
    envs = Envs(
        timing_differences(base_env, new_env, opts.allow_env),
        numeric_differences(base_env, new_env, opts.allow_env),
        {} if opts.allow_load else {**busy_cases(base, base_env, "base"), **busy_cases(new, new_env, "new")},
        paired_differences(base_env, new_env, opts.allow_env),
    )
    result = Comparison([], [], [])
    base_kinds, new_kinds = _by_kind(base), _by_kind(new)
    for kind in sorted(set(base_kinds) | set(new_kinds)):
        bench = benches.get(kind)
        b, n = base_kinds.get(kind, base.iloc[:0]), new_kinds.get(kind, new.iloc[:0])
        rows: list[CompareRow] = []
        varying = None  # without the bench, uncovered_rows finds it
        if bench is not None:
            varying = varying_params(pd.concat([b["params"], n["params"]]))
            rows.extend(status_rows(kind, b, n, bench, varying))
            sides = Sides(b, n, data_hashes(b), data_hashes(n), varying)
            for metric, direction in gated_metrics(bench, opts).items():
                metric_rows, noise, untestable = _metric_rows(
                    kind, metric, direction, sides, bench, opts, envs
                )
                rows.extend(metric_rows)
                if noise is not None:
                    result.notes.append(noise.note)
                    if noise.floor > opts.factor:
                        result.undetectable.append(
                            f"{kind}/{metric}: the noise floor {noise.floor:.2f}x is above --factor "
                            f"{opts.factor:g}"
                        )
                result.notes.extend(untestable.notes(kind, metric, opts.alpha))
                result.undetectable.extend(untestable.hidden(kind, metric, opts))
            confirm_across_references(rows, bench.paired_metrics, opts.factor)
        rows.extend(uncovered_rows(kind, b, n, bench, rows, varying))
        result.rows.extend(rows)
    return result


def gated_metrics(bench, opts: CompareOptions) -> dict[str, str]:
    """The metrics compare judges for a bench: its compare_metrics, and its absolute times under --absolute."""
    return {**bench.compare_metrics, **(bench.absolute_metrics if opts.absolute else {})}


def _by_kind(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """One frame per bench kind, in one pass (a filter per kind is a pass over every row each)."""
    return {k: g for k, g in frame.groupby("bench", sort=False)} if not frame.empty else {}


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


def _metric_rows(
    kind, metric, direction, sides: Sides, bench, opts, envs: Envs
) -> tuple[list[CompareRow], Noise | None, Untestable]:
    """(rows, run-to-run noise, cases no test could judge) of one metric of one bench kind."""
    gb = metric_groups(sides.base, metric, bench.compare_pool)
    gn = metric_groups(sides.new, metric, bench.compare_pool)
    out, judged, untestable, tests, in_sets = [], [], Untestable(), [], []
    paired = metric in bench.paired_metrics
    for key in sorted(set(gb) | set(gn)):
        norm, impl, params = json.loads(key)
        label = describe_case(norm, impl, params, bench, sides.varying)
        ids = (gb[key].case_ids if key in gb else frozenset()) | (
            gn[key].case_ids if key in gn else frozenset()
        )
        if key not in gb or key not in gn:
            note = "only in " + ("new" if key in gn else "base")
            out.append(CompareRow("x", kind, label, metric, note=note, case_ids=ids))
            continue
        gbk, gnk = gb[key], gn[key]
        tolerance = bench.compare_tolerance(metric, json.loads(gbk.params))
        a, b = gbk.values, gnk.values
        if direction.endswith("_abs"):  # signed errors: compare their size
            a, b = [abs(v) for v in a], [abs(v) for v in b]
        mb, mn = median(a), median(b)
        ratio = mn / mb if mb else (1.0 if mn == mb else float("inf"))
        row = CompareRow("=", kind, label, metric, mb, mn, ratio, unit=gbk.unit, case_ids=ids)
        out.append(row)
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
        pooled = gbk.pooled and gnk.pooled
        tested = False
        if a == b:
            row.p = 1.0  # identical values: nothing changed
        elif tolerance is not None and not pooled:
            # the same seeded inputs on both sides, value for value: no sampling noise to test against
            row.note = _join(row.note, "deterministic: factor only")
        elif len(a) >= 3 and len(b) >= 3:
            tests.append((row, a, b))  # p for every such row at once, below
            tested = True
        else:
            row.note = _join(row.note, f"n={min(len(a), len(b))}: no test, factor only")
        if pooled:
            over = "/".join(bench.compare_pool)  # values pooled over seeds: show their spread
            spread = (
                f"sd over {over}: {pd.Series(a).std():.3g} -> {pd.Series(b).std():.3g} (n={len(a)}, {len(b)})"
            )
            row.note = _join(row.note, spread)
        test = (len(a), len(b), smallest_p(a, b)) if tested else None
        judged.append((row, run_medians(gbk, direction), run_medians(gnk, direction), tolerance, test))
        if paired:
            in_sets.append((row, gbk.round_set, gnk.round_set))
    shifts = judge_against_round_sets(in_sets)
    for (row, _, _), p in zip(tests, mann_whitney_p([(a, b) for _, a, b in tests]), strict=True):
        row.p = p
    timed = [(r, rb, rn) for r, rb, rn, tol, _ in judged if tol is None]
    noise = run_to_run_noise(timed, kind, metric, opts.alpha)
    if noise is not None and shifts:
        noise.note = f"{noise.note}; {shift_note(kind, metric, shifts)}"
    lower_is_better = direction.startswith("lower")
    for row, runs_b, runs_n, tolerance, test in judged:
        ratio = row.judged_ratio  # beyond its round set's shift, where it has one
        worse = ratio > opts.factor if lower_is_better else ratio < 1 / opts.factor
        better = ratio < 1 / opts.factor if lower_is_better else ratio > opts.factor
        significant = row.p is None or row.p < opts.alpha
        if test is not None and test[2] >= opts.alpha:  # no p this test can give is below alpha
            untestable.add(test, hidden=worse)
            if worse:  # a change of the size the gate looks for, which no test here can confirm or clear
                n_b, n_n, smallest = test
                row.mark = "x"
                row.note = _join(
                    row.note,
                    f"undetectable: n={n_b} vs {n_n} samples, no Mann-Whitney test reaches p < {opts.alpha:g} "
                    f"(its smallest p is {smallest:.2g})",
                )
                continue
        if tolerance is None and significant and noise and 0 < ratio < float("inf"):
            bound = noise.sigma * math.sqrt(1 / len(runs_b) + 1 / len(runs_n)) * z_score(opts.alpha)
            if abs(math.log(ratio)) <= bound:
                significant = False
                row.note = f"within run-to-run noise (|log ratio| ≤ {bound:.2f})"
        if row.shift:
            row.note = _join(row.note, f"×{ratio:.3f} beyond its round set's ×{row.shift:.3f}")
        if worse or better:
            row.mark = ("+" if worse else "-") if significant else "~"
        elif tolerance is not None:
            row.mark = "~"  # beyond the tolerance but within the factor: changed, not enough to gate on
        elif significant and noise and row.p is not None and ratio != 1:
            # a timing change beyond the run-to-run noise, yet within the factor: changed, below the gate
            row.mark = "~"
            row.note = _join(row.note, f"changed ×{ratio:.3f}, within --factor {opts.factor:g}")
    return out, noise, untestable


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
