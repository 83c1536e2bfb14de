"""Comparing two runs, asv-style. For each bench's compare metrics, cases are matched by case_id (or,
for metrics pooled over seeds, by their parameters without the seed); the ratio of medians decides
whether a change is large enough (--factor), and a two-sided Mann-Whitney U test on the raw samples
(scipy) whether it is real (p < alpha, asv's 0.002). Marks:

    +  worse and significant      -  better and significant     ~  beyond the factor, not significant
    !  status regressed (ok -> failed/diverged/stuck)            x  not comparable (says why)

A case is not comparable (x) when the environments differ (--allow-env FIELD permits one), when the training
data's SHA-256 differs, or when either side's stored 1-minute load average exceeded that run's core count
(--allow-load permits it): its times include time stolen by other processes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import pandas as pd

MARKS = {
    "+": "worse",
    "-": "better",
    "~": "changed, not significant",
    " ": "unchanged",
    "!": "status regressed",
    "x": "not comparable",
}
ENV_FIELDS = ("hostname", "cpu", "gpu", "python", "torch", "torch_threads", "cuda", "cudnn")
NOT_RUN = {"skipped", "unavailable"}


@dataclass
class CompareOptions:
    factor: float = 1.1
    alpha: float = 0.002
    allow_env: set[str] = field(default_factory=set)  # environment fields allowed to differ
    allow_load: bool = False  # compare cases timed while the load exceeded the core count


@dataclass
class CompareRow:
    mark: str
    bench: str
    case: str
    metric: str
    base: float | None = None
    new: float | None = None
    ratio: float | None = None
    p: float | None = None
    note: str = ""
    unit: str = ""

    @property
    def regression(self) -> bool:
        return self.mark in ("+", "!")


def environment_differences(base_env: dict, new_env: dict, allow: set[str]) -> list[str]:
    return [
        f"{k}: {base_env.get(k)} -> {new_env.get(k)}"
        for k in ENV_FIELDS
        if k not in allow and base_env.get(k) != new_env.get(k)
    ]


def compare_frames(
    base: pd.DataFrame, new: pd.DataFrame, base_env: dict, new_env: dict, opts: CompareOptions
) -> tuple[list[CompareRow], list[str]]:
    """The comparison rows, and notes on the run-to-run noise each metric was judged against."""
    from normbench.benches import all_benches

    benches = all_benches()
    env_diff = environment_differences(base_env, new_env, opts.allow_env)
    busy = (
        {} if opts.allow_load else {**busy_cases(base, base_env, "base"), **busy_cases(new, new_env, "new")}
    )
    rows: list[CompareRow] = []
    notes: list[str] = []
    for kind in sorted(set(base["bench"]) | set(new["bench"])):
        bench = benches.get(kind)
        b, n = base[base["bench"] == kind], new[new["bench"] == kind]
        if bench is None:
            continue
        rows.extend(_status_rows(kind, b, n, bench))
        for metric, direction in bench.compare_metrics.items():
            metric_rows, note = _metric_rows(kind, metric, direction, b, n, bench, opts, env_diff, busy)
            rows.extend(metric_rows)
            if note:
                notes.append(note)
    return rows, notes


def describe_case(norm, impl, params: dict, bench, varying: frozenset[str] = frozenset()) -> str:
    """norm:impl and the parameters a reader needs to tell the case apart: those that differ from the
    bench's defaults, and those that vary among the cases shown with it (`varying`), even at their default
    (placement=post beside placement=pre)."""
    shown = {
        k: v
        for k, v in params.items()
        if k in varying or k not in bench.params or bench.params[k].required or bench.params[k].default != v
    }
    head = f"{norm}:{impl} " if isinstance(norm, str) else ""
    return head + " ".join(f"{k}={v}" for k, v in shown.items())


def varying_params(params_json) -> frozenset[str]:
    """The parameter names whose values differ among these cases (a column of params JSON strings)."""
    seen: dict[str, set[str]] = {}
    for text in dict.fromkeys(params_json):
        for k, v in json.loads(text).items():
            seen.setdefault(k, set()).add(json.dumps(v, sort_keys=True))
    return frozenset(k for k, values in seen.items() if len(values) > 1)


def _group_key(row, pool) -> str:
    params = {k: v for k, v in json.loads(row["params"]).items() if k not in pool}
    return json.dumps([row["norm"], row["impl"], params], sort_keys=True, default=str)


def busy_cases(frame: pd.DataFrame, env: dict, side: str) -> dict[tuple[str, str], str]:
    """{(run_id, case_id): why} for the cases whose stored load average exceeded the run's core count."""
    cores = env.get("cpu_count") or 0
    load = frame[frame["metric"] == "loadavg_1m"]
    if not cores or load.empty:
        return {}
    over = load[load["value"] > cores]
    return {
        (r, c): f"{side} ran with load {v:.1f} above {cores} cores"
        for r, c, v in zip(over["run_id"], over["case_id"], over["value"], strict=True)
    }


def _metric_rows(kind, metric, direction, base, new, bench, opts, env_diff, busy) -> list[CompareRow]:
    from scipy.stats import mannwhitneyu

    def groups(frame):
        # every case that produced a result: ok, and outcomes such as stuck or not_converged (not failed/skipped)
        sel = frame[(frame["metric"] == metric) & ~frame["status"].isin(["failed", "skipped", "unavailable"])]
        if sel.empty:
            return {}
        keys = sel.apply(lambda r: _group_key(r, bench.compare_pool), axis=1)
        return {k: g for k, g in sel.groupby(keys)}

    gb, gn = groups(base), groups(new)
    varying = varying_params(pd.concat([base["params"], new["params"]]))
    out, judged = [], []
    for key in sorted(set(gb) | set(gn)):
        norm, impl, params = json.loads(key)
        label = describe_case(norm, impl, params, bench, varying)
        if key not in gb or key not in gn:
            out.append(
                CompareRow("x", kind, label, metric, note="only in " + ("new" if key in gn else "base"))
            )
            continue
        a, b = _values(gb[key]), _values(gn[key])
        if direction.endswith("_abs"):  # signed errors: compare their size
            a, b = [abs(v) for v in a], [abs(v) for v in b]
        unit = str(gb[key]["unit"].iloc[0] or "")
        mb, mn = float(pd.Series(a).median()), float(pd.Series(b).median())
        ratio = mn / mb if mb else (1.0 if mn == mb else float("inf"))
        row = CompareRow(" ", kind, label, metric, mb, mn, ratio, unit=unit)
        out.append(row)
        if env_diff:
            row.mark, row.note = "x", "environment differs: " + "; ".join(env_diff)
            continue
        if (hb := _data_hashes(base, gb[key])) != (hn := _data_hashes(new, gn[key])):
            row.mark, row.note = "x", f"data differs: sha256 {_short(hb)} -> {_short(hn)}"
            continue
        loaded = [
            busy[k]
            for g in (gb[key], gn[key])
            for k in dict.fromkeys(zip(g["run_id"], g["case_id"], strict=True))
            if k in busy
        ]
        if loaded:
            row.mark, row.note = "x", "; ".join(dict.fromkeys(loaded)) + " (--allow-load to compare)"
            continue
        if a == b:
            row.p = 1.0  # identical values (a deterministic metric): nothing changed
        elif len(a) >= 3 and len(b) >= 3:
            row.p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
        else:
            row.note = f"n={min(len(a), len(b))}: no test, factor only"
        if bench.compare_pool and gb[key]["sample"].isna().all() and min(len(a), len(b)) >= 2:
            pooled = "/".join(bench.compare_pool)  # values pooled over seeds: show their spread
            spread = f"sd over {pooled}: {pd.Series(a).std():.3g} -> {pd.Series(b).std():.3g} (n={len(a)}, {len(b)})"
            row.note = f"{row.note}; {spread}" if row.note else spread
        judged.append((row, _run_medians(gb[key], direction), _run_medians(gn[key], direction)))
    noise, note = _run_to_run_noise(judged, kind, metric, opts)
    lower_is_better = direction.startswith("lower")
    for row, runs_b, runs_n in judged:
        worse = row.ratio > opts.factor if lower_is_better else row.ratio < 1 / opts.factor
        better = row.ratio < 1 / opts.factor if lower_is_better else row.ratio > opts.factor
        significant = row.p is None or row.p < opts.alpha
        if significant and noise and 0 < row.ratio < float("inf"):
            bound = noise * math.sqrt(1 / len(runs_b) + 1 / len(runs_n)) * _z(opts.alpha)
            if abs(math.log(row.ratio)) <= bound:
                significant = False
                row.note = f"within run-to-run noise (|log ratio| ≤ {bound:.2f})"
        if worse or better:
            row.mark = ("+" if worse else "-") if significant else "~"
    return out, note


def _data_hashes(frame: pd.DataFrame, group: pd.DataFrame) -> frozenset:
    """The SHA-256s of the text the group's cases trained on (empty for benches without data)."""
    if "data_sha256" not in frame:
        return frozenset()
    rows = frame[frame["case_id"].isin(group["case_id"]) & frame["data_sha256"].notna()]
    return frozenset(rows["data_sha256"])


def _short(hashes: frozenset) -> str:
    return ",".join(sorted(h[:12] for h in hashes)) or "none"


def _z(alpha: float) -> float:
    from scipy.stats import norm

    return float(norm.isf(alpha / 2))


def _run_medians(group: pd.DataFrame, direction: str) -> list[float]:
    """One median per run (several run ids may be given per side)."""
    values = group.assign(value=group["value"].abs()) if direction.endswith("_abs") else group
    raw = values[values["sample"].notna()]
    return [float(v) for v in (raw if not raw.empty else values).groupby("run_id")["value"].median()]


def _run_to_run_noise(judged, kind: str, metric: str, opts: CompareOptions) -> tuple[float | None, str]:
    """The spread of one run's median around another's, in log units (σ of a single run).

    Samples inside one run share that process's state (memory placement, frequency, a neighbour's burst), so
    the Mann-Whitney test alone calls run-to-run noise significant. With several runs per side, σ is the
    pooled spread of their medians. With one run per side it is estimated from all the cases at once, most of
    which did not change (an empirical null: 1.4826·MAD of the log ratios / √2). Fewer than 8 cases: no gate."""
    import numpy as np

    usable = [(r, b, n) for r, b, n in judged if r.ratio and 0 < r.ratio < float("inf")]
    multi = [
        np.std(np.log(b), ddof=1) ** 2 + np.std(np.log(n), ddof=1) ** 2
        for _, b, n in usable
        if len(b) >= 2 and len(n) >= 2 and min(b + n) > 0
    ]
    if len(multi) >= 8:
        sigma, how = float(np.sqrt(np.mean(multi) / 2)), "pooled variance of the run medians given per side"
    elif len(usable) >= 8:
        logs = np.log([r.ratio for r, _, _ in usable])
        sigma = float(1.4826 * np.median(np.abs(logs - np.median(logs))) / np.sqrt(2))
        how = f"1.4826·MAD of the log ratios of {len(usable)} cases (most assumed unchanged)"
    else:
        return None, ""
    if sigma == 0:
        return None, ""
    nb, nn = (int(np.median([len(x[i]) for x in usable])) for i in (1, 2))
    floor = math.exp(sigma * math.sqrt(1 / nb + 1 / nn) * _z(opts.alpha))
    note = (
        f"{kind}/{metric}: run-to-run noise σ = {sigma:.1%} per run ({how}); with {nb} vs {nn} run(s), "
        f"changes below {floor:.2f}× cannot be told from it"
    )
    if nb == 1 or nn == 1:
        note += "; pass several runs per side (A,B,C) to see smaller ones"
    return sigma, note


def _values(group: pd.DataFrame) -> list[float]:
    """Raw samples when the metric has them (sample index set), else one value per pooled case."""
    raw = group[group["sample"].notna()]
    return [float(v) for v in (raw if not raw.empty else group)["value"]]


def _status_rows(kind, base, new, bench) -> list[CompareRow]:
    """Per case: a status that got worse is a regression whatever the numbers say."""
    sb = base.drop_duplicates("case_id").set_index("case_id")
    sn = new.drop_duplicates("case_id").set_index("case_id")
    out = []
    varying = varying_params(pd.concat([sb["params"], sn["params"]]))
    for case_id in sorted(set(sb.index) & set(sn.index)):
        old, now = sb.loc[case_id, "status"], sn.loc[case_id, "status"]
        if old == now:
            continue
        label = describe_case(
            sn.loc[case_id, "norm"],
            sn.loc[case_id, "impl"],
            json.loads(sn.loc[case_id, "params"]),
            bench,
            varying,
        )
        reason = sn.loc[case_id, "error"]
        note = f"{old} -> {now}" + (f": {reason}" if isinstance(reason, str) and reason else "")
        if old in NOT_RUN or now in NOT_RUN:
            mark = "x"
        else:
            mark = "!" if old == "ok" else ("-" if now == "ok" else "x")
        out.append(CompareRow(mark, kind, label, "status", note=note))
    return out


def comparison_table(rows: list[CompareRow], *, only_changed: bool = False) -> pd.DataFrame:
    from normbench.core.tables import format_seconds

    def fmt(v, unit):
        if v is None or pd.isna(v):
            return ""
        return format_seconds(v) if unit == "s" else f"{v:.4g}"

    shown = [r for r in rows if not only_changed or r.mark != " "]
    return pd.DataFrame(
        {
            "": [r.mark for r in shown],
            "bench": [r.bench for r in shown],
            "case": [r.case for r in shown],
            "metric": [r.metric for r in shown],
            "base": [fmt(r.base, r.unit) for r in shown],
            "new": [fmt(r.new, r.unit) for r in shown],
            "ratio": ["" if r.ratio is None else f"{r.ratio:.3f}" for r in shown],
            "p": ["" if r.p is None else f"{r.p:.2g}" for r in shown],
            "note": [r.note for r in shown],
        },
        columns=["", "bench", "case", "metric", "base", "new", "ratio", "p", "note"],
    )


def comparison_records(rows: list[CompareRow], *, only_changed: bool = False) -> pd.DataFrame:
    """The comparison as data (csv/json): base/new in the metric's unit (seconds for times), ratio = new/base,
    p of the Mann-Whitney test, the mark and its meaning."""
    shown = [r for r in rows if not only_changed or r.mark != " "]
    columns = ["mark", "meaning", "bench", "case", "metric", "unit", "base", "new", "ratio", "p", "note"]
    return pd.DataFrame(
        [
            {
                "mark": r.mark.strip(),
                "meaning": MARKS[r.mark],
                "bench": r.bench,
                "case": r.case,
                "metric": r.metric,
                "unit": r.unit,
                "base": r.base,
                "new": r.new,
                "ratio": r.ratio,
                "p": r.p,
                "note": r.note,
            }
            for r in shown
        ],
        columns=columns,
    ).astype({"base": "float64", "new": "float64", "ratio": "float64", "p": "float64"})


def summary_line(rows: list[CompareRow]) -> str:
    counts = {m: sum(r.mark == m for r in rows) for m in MARKS}
    return ", ".join(f"{counts[m]} {MARKS[m]} ({m.strip() or 'blank'})" for m in MARKS if counts[m])
