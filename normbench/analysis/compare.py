"""Comparing two runs, asv-style. For each bench's compare metrics, cases are matched by case_id (or,
for metrics pooled over seeds, by their parameters without the seed). Marks:

    +  worse and significant      -  better and significant     ~  beyond the factor, not significant
    =  compared: unchanged        !  status regressed (ok -> failed/diverged/stuck)
    x  not comparable (the note says why)

Timing metrics (the bench's `compare_tolerance` is None): the ratio of medians decides whether a change is
large enough (--factor), and a two-sided Mann-Whitney U test on the raw samples (scipy) whether it is real
(p < alpha, asv's 0.002), judged against the run-to-run noise. They are `x` when the machine or torch differs
or a side ran above its core count (analysis/comparability.py).

Deterministic metrics (a Tolerance): values within the tolerance are `=`, whatever the load or hostname.
Beyond it, with the same arithmetic (torch, instruction set, data), the factor decides (and the test, for
values pooled over seeds; a case's own values pair up and have no sampling noise); with different arithmetic the case is `x`: a platform change cannot be told from a code change.

Every case of either run is accounted for: one that no metric row covers is compared by its status.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import pandas as pd

from normbench.analysis.comparability import (
    busy_cases,
    numeric_differences,
    paired_differences,
    timing_differences,
)
from normbench.analysis.noise import Noise, run_medians, run_to_run_noise, z_score
from normbench.analysis.round_sets import (
    confirm_across_references,
    judge_against_round_sets,
    round_set_of,
    shift_note,
)
from normbench.analysis.rows import CompareRow, describe_case, varying_params
from normbench.benches import all_benches

MARKS = {
    "+": "worse",
    "-": "better",
    "~": "changed, not significant",
    "=": "unchanged",
    "!": "status regressed",
    "x": "not comparable",
}
# The fields `normbench report` shows when runs of different environments are combined.
ENV_FIELDS = ("hostname", "cpu", "gpu", "python", "torch", "torch_threads", "cuda", "cudnn")
ORDER_COLUMNS = ("case_id", "sample", "step", "layer", "site", "tensor", "scale")


@dataclass
class CompareOptions:
    factor: float = 1.1
    alpha: float = 0.002
    allow_env: set[str] = field(default_factory=set)  # environment fields allowed to differ
    allow_load: bool = False  # compare cases timed while the load exceeded the core count
    absolute: bool = False  # also gate the benches' absolute times (Bench.absolute_metrics)


@dataclass
class Comparison:
    rows: list[CompareRow]
    notes: list[str]  # the run-to-run noise each timing metric was judged against
    undetectable: list[str]  # metrics whose noise floor is above --factor: a change of that size hides in it


def compare_frames(
    base: pd.DataFrame, new: pd.DataFrame, base_env: dict, new_env: dict, opts: CompareOptions
) -> Comparison:
    from normbench.analysis.case_rows import status_rows, uncovered_rows  # they build CompareRows

    benches = all_benches()
    envs = Envs(
        timing_differences(base_env, new_env, opts.allow_env),
        numeric_differences(base_env, new_env, opts.allow_env),
        {} if opts.allow_load else {**busy_cases(base, base_env, "base"), **busy_cases(new, new_env, "new")},
        paired_differences(base_env, new_env, opts.allow_env),
    )
    result = Comparison([], [], [])
    for kind in sorted(set(base["bench"].dropna()) | set(new["bench"].dropna())):
        bench = benches.get(kind)
        b, n = base[base["bench"] == kind], new[new["bench"] == kind]
        rows: list[CompareRow] = []
        if bench is not None:
            rows.extend(status_rows(kind, b, n, bench))
            for metric, direction in gated_metrics(bench, opts).items():
                metric_rows, noise = _metric_rows(kind, metric, direction, b, n, bench, opts, envs)
                rows.extend(metric_rows)
                if noise is not None:
                    result.notes.append(noise.note)
                    if noise.floor > opts.factor:
                        result.undetectable.append(
                            f"{kind}/{metric}: the noise floor {noise.floor:.2f}x is above --factor "
                            f"{opts.factor:g}"
                        )
        if bench is not None:
            confirm_across_references(rows, bench.paired_metrics, opts.factor)
        rows.extend(uncovered_rows(kind, b, n, bench, rows))
        result.rows.extend(rows)
    return result


def gated_metrics(bench, opts: CompareOptions) -> dict[str, str]:
    """The metrics compare judges for a bench: its compare_metrics, and its absolute times under --absolute."""
    return {**bench.compare_metrics, **(bench.absolute_metrics if opts.absolute else {})}


@dataclass
class Envs:
    timing: list[str]  # differences that make times incomparable
    numeric: list[str]  # differences that may change deterministic values
    busy: dict[tuple[str, str], str]
    paired: list[str]  # differences that make paired ratios incomparable (not load, not the machine's name)


def _group_key(row, pool) -> str:
    params = {k: v for k, v in json.loads(row["params"]).items() if k not in pool}
    return json.dumps([row["norm"], row["impl"], params], sort_keys=True, default=str)


def _metric_rows(
    kind, metric, direction, base, new, bench, opts, envs: Envs
) -> tuple[list[CompareRow], Noise | None]:
    def groups(frame):
        # every case that produced a result: ok, and outcomes such as stuck or not_converged (not failed/skipped)
        sel = frame[(frame["metric"] == metric) & ~frame["status"].isin(["failed", "skipped", "unavailable"])]
        if sel.empty:
            return {}
        keys = sel.apply(lambda r: _group_key(r, bench.compare_pool), axis=1)
        return {k: g for k, g in sel.groupby(keys)}

    gb, gn = groups(base), groups(new)
    varying = varying_params(pd.concat([base["params"], new["params"]]))
    out, judged, in_sets = [], [], []
    for key in sorted(set(gb) | set(gn)):
        norm, impl, params = json.loads(key)
        label = describe_case(norm, impl, params, bench, varying)
        ids = frozenset(gb[key]["case_id"] if key in gb else ()) | frozenset(
            gn[key]["case_id"] if key in gn else ()
        )
        if key not in gb or key not in gn:
            note = "only in " + ("new" if key in gn else "base")
            out.append(CompareRow("x", kind, label, metric, note=note, case_ids=ids))
            continue
        tolerance = bench.compare_tolerance(metric, json.loads(gb[key]["params"].iloc[0]))
        a, b = _values(gb[key]), _values(gn[key])
        if direction.endswith("_abs"):  # signed errors: compare their size
            a, b = [abs(v) for v in a], [abs(v) for v in b]
        unit = str(gb[key]["unit"].iloc[0] or "")
        mb, mn = float(pd.Series(a).median()), float(pd.Series(b).median())
        ratio = mn / mb if mb else (1.0 if mn == mb else float("inf"))
        row = CompareRow("=", kind, label, metric, mb, mn, ratio, unit=unit, case_ids=ids)
        out.append(row)
        if (hb := _data_hashes(base, gb[key])) != (hn := _data_hashes(new, gn[key])):
            row.mark, row.note = "x", f"data differs: sha256 {_short(hb)} -> {_short(hn)}"
            continue
        if tolerance is not None:
            if not _deterministic_differs(row, a, b, tolerance, envs):
                continue
        elif reason := _timing_not_comparable(gb[key], gn[key], envs, metric in bench.paired_metrics):
            row.mark, row.note = "x", reason
            continue
        pooled = _pooled_over_cases(gb[key], bench) and _pooled_over_cases(gn[key], bench)
        if a == b:
            row.p = 1.0  # identical values: nothing changed
        elif tolerance is not None and not pooled:
            # the same seeded inputs on both sides, value for value: no sampling noise to test against
            row.note = _join(row.note, "deterministic: factor only")
        elif len(a) >= 3 and len(b) >= 3:
            from scipy.stats import mannwhitneyu

            row.p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
        else:
            row.note = _join(row.note, f"n={min(len(a), len(b))}: no test, factor only")
        if pooled:
            over = "/".join(bench.compare_pool)  # values pooled over seeds: show their spread
            spread = (
                f"sd over {over}: {pd.Series(a).std():.3g} -> {pd.Series(b).std():.3g} (n={len(a)}, {len(b)})"
            )
            row.note = _join(row.note, spread)
        judged.append((row, run_medians(gb[key], direction), run_medians(gn[key], direction), tolerance))
        if metric in bench.paired_metrics:
            in_sets.append((row, round_set_of(gb[key]), round_set_of(gn[key])))
    shifts = judge_against_round_sets(in_sets)
    timed = [(r, rb, rn) for r, rb, rn, tol in judged if tol is None]
    noise = run_to_run_noise(timed, kind, metric, opts.alpha)
    if noise is not None and shifts:
        noise.note = f"{noise.note}; {shift_note(kind, metric, shifts)}"
    lower_is_better = direction.startswith("lower")
    for row, runs_b, runs_n, tolerance in judged:
        ratio = row.judged_ratio
        worse = ratio > opts.factor if lower_is_better else ratio < 1 / opts.factor
        better = ratio < 1 / opts.factor if lower_is_better else ratio > opts.factor
        significant = row.p is None or row.p < opts.alpha
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
    return out, noise


def _pooled_over_cases(group: pd.DataFrame, bench) -> bool:
    """One value per case, several cases (seeds) in the group: a sample of a distribution, which the test
    compares. Several values of one case (per input, per layer) pair up value for value instead."""
    return (
        bool(bench.compare_pool)
        and group["sample"].isna().all()
        and group["case_id"].nunique() == len(group) > 1
    )


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


def _timing_not_comparable(group_b, group_n, envs: Envs, paired: bool) -> str:
    """Why two groups' times cannot be compared, or "". A paired ratio (a time over another timed in the
    same rounds) cancels the machine's speed: load and the core count do not matter to it."""
    if paired:
        return "environment differs: " + "; ".join(envs.paired) if envs.paired else ""
    if envs.timing:
        return "environment differs: " + "; ".join(envs.timing)
    loaded = [
        envs.busy[k]
        for g in (group_b, group_n)
        for k in dict.fromkeys(zip(g["run_id"], g["case_id"], strict=True))
        if k in envs.busy
    ]
    return "; ".join(dict.fromkeys(loaded)) + " (--allow-load to compare)" if loaded else ""


def _data_hashes(frame: pd.DataFrame, group: pd.DataFrame) -> frozenset:
    """The SHA-256s of the text the group's cases trained on (empty for benches without data)."""
    if "data_sha256" not in frame:
        return frozenset()
    rows = frame[frame["case_id"].isin(group["case_id"]) & frame["data_sha256"].notna()]
    return frozenset(rows["data_sha256"])


def _short(hashes: frozenset) -> str:
    return ",".join(sorted(h[:12] for h in hashes)) or "none"


def _values(group: pd.DataFrame) -> list[float]:
    """Raw samples when the metric has them (sample index set), else one value per pooled case, in a fixed
    order (case, sample, step, layer, ...) so that deterministic values pair up value by value."""
    raw = group[group["sample"].notna()]
    chosen = raw if not raw.empty else group
    order = [c for c in ORDER_COLUMNS if c in chosen]
    return [float(v) for v in chosen.sort_values(order, na_position="first")["value"]]
