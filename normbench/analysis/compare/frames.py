"""Two runs' rows compared, asv-style, per bench compare metric: cases matched by case_id (or, for metrics
pooled over seeds, by their parameters without the seed), each marked + - ~ = ! or x (core/verdicts.py's
COMPARE_MARKS; docs/ci.md, "Marks"). Every case of either run is accounted for; how each kind of metric is
judged: docs/methodology.md."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from normbench.analysis.compare.case_rows import status_rows, uncovered_rows
from normbench.analysis.compare.comparability import (
    busy_cases,
    numeric_differences,
    paired_differences,
    timing_differences,
)
from normbench.analysis.compare.groups import data_hashes
from normbench.analysis.compare.metric_rows import Envs, Sides, metric_rows
from normbench.analysis.compare.options import CompareOptions
from normbench.analysis.compare.round_sets import confirm_across_references
from normbench.analysis.rows import CompareRow, varying_params
from normbench.benches import all_benches


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
                found, noises, untestable = metric_rows(kind, metric, direction, sides, bench, opts, envs)
                rows.extend(found)
                for noise in noises:
                    result.notes.append(noise.note)
                    if noise.floor > opts.factor:
                        result.undetectable.append(
                            f"{noise.label}: the noise floor {noise.floor:.2f}x is above --factor "
                            f"{opts.factor:g}"
                        )
                result.notes.extend(untestable.notes(kind, metric, opts.alpha))
                result.undetectable.extend(untestable.undetectable(kind, metric, opts))
            confirm_across_references(rows, bench.paired_metrics, opts.factor)
        rows.extend(
            uncovered_rows(kind, b, n, bench, rows, varying, deterministic_only=opts.deterministic_only)
        )
        result.rows.extend(rows)
    return result


def gated_metrics(bench, opts: CompareOptions) -> dict[str, str]:
    """The metrics compare judges for a bench: its compare_metrics, and its absolute times under --absolute;
    under deterministic_only, none of its timing metrics (paired ratios or times)."""
    if opts.deterministic_only:
        return {m: d for m, d in bench.compare_metrics.items() if m not in bench.paired_metrics}
    return {**bench.compare_metrics, **(bench.absolute_metrics if opts.absolute else {})}


def _by_kind(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """One frame per bench kind, in one pass (a filter per kind is a pass over every row each)."""
    return {k: g for k, g in frame.groupby("bench", sort=False)} if not frame.empty else {}
