"""The latency bench's lines in the report summary (Latency.headline): per shape the fastest implementation,
how much faster or slower than the baseline (the run's reference; the paired ratio with its interval) and
its fraction of the copy probe, or one line per norm when there are many shapes; then what to distrust. The numbers are the tables' (benches/_latency/report.py builds both)."""

from __future__ import annotations

import pandas as pd

from normbench.benches import get_bench
from normbench.benches._latency.notes import SLOWDOWN_FLAG
from normbench.core.tables import ReportOptions, format_seconds, versus_words

BARE = ("device", "dtype", "mode")  # values that name themselves
MAX_SHAPE_LINES = 6  # more shapes than this: one line per norm instead of one per shape


def case_table(rows: pd.DataFrame, baseline: str | None) -> tuple[pd.DataFrame, list[str]]:
    """One row per ok case (the report's case frame: keys, norm, impl, metrics, `time` = its statistic)
    with `label` (norm:impl), `time_s`, `high_spread`, `baseline`, `vs_ratio` / `vs_lo` / `vs_hi` /
    `vs_paired` (this case's time over the baseline's at the same keys, paired where the run allows:
    _latency/versus.py) and `speedup_vs_baseline` (1 / vs_ratio); and the keys that tell the shapes apart."""
    from normbench.benches._latency.report import _case_frame, _varying_keys
    from normbench.benches._latency.versus import COLUMNS, default_baseline, versus
    from normbench.core.stats import HIGH_SPREAD, high_spread

    ok = rows[rows["status"] == "ok"]
    if ok.empty or "time_median" not in set(ok["metric"]):
        return pd.DataFrame(), []
    keys, _ = _varying_keys(ok)
    keys = [k for k in keys if k != "samples"]
    cases = _case_frame(ok, keys).rename(columns={"column": "label"})
    cases = cases[cases["time"].notna()].assign(time_s=lambda c: c["time"])
    iqr = cases["time_iqr"] if "time_iqr" in cases else pd.Series(0.0, index=cases.index)
    cases["high_spread"] = [
        bool(high_spread(m, q)) for m, q in zip(cases["time_median"], iqr.fillna(0.0), strict=True)
    ]
    # A case timed in paired rounds is judged by its ratio, not its seconds (which carry the machine's
    # phases): the 95% interval of its ratio to the copy probe (or to the reference) wider than 10%
    for metric in ("time_vs_ref", "time_vs_copy"):
        if f"{metric}_lo" in cases:
            width = (cases[f"{metric}_hi"] - cases[f"{metric}_lo"]) / cases[f"{metric}_median"]
            paired = width.notna()
            cases.loc[paired, "high_spread"] = width[paired] > HIGH_SPREAD
    base = baseline or default_baseline(ok, set(cases["label"]))
    cases["baseline"] = base
    if base is None:
        cases[COLUMNS] = float("nan")
        cases["speedup_vs_baseline"] = float("nan")
        return cases, keys
    cases[COLUMNS] = versus(ok, cases, base, keys)
    cases["speedup_vs_baseline"] = 1 / cases["vs_ratio"]
    return cases, keys


def latency_headline(rows: pd.DataFrame, opts: ReportOptions) -> list[str]:
    """Per shape: the fastest implementation, its speedup over the baseline and its fraction of the copy
    probe; one line per norm instead when there are many shapes. Then what to distrust."""
    rec, keys = case_table(rows, opts.baseline)
    if rec.empty:
        return []
    params = get_bench("latency").params
    contenders = rec[rec["norm"] != "identity"]
    if contenders.empty:
        return []
    baseline = rec["baseline"].dropna().iloc[0] if rec["baseline"].notna().any() else None
    groups = list(contenders.groupby(keys, sort=True, dropna=False))
    if len(groups) <= MAX_SHAPE_LINES:
        lines = [_shape_line(dict(zip(keys, k, strict=True)), g, baseline, params) for k, g in groups]
    else:
        lines = _norm_lines(contenders, keys, baseline)
    return [*lines, *_latency_distrust(rec)]


def _shape_name(key: dict, params) -> str:
    words = [str(key[k]) for k in BARE if k in key]
    if "tokens" in key and "d" in key:
        words.append(f"{key['tokens']}×{key['d']}")
    for k, v in key.items():
        if k not in (*BARE, "tokens", "d") and (k not in params or v != params[k].default):
            words.append(f"{k}={v}")
    return " ".join(words)


def _shape_line(key: dict, group: pd.DataFrame, baseline: str | None, params) -> str:
    best = group.loc[group["time_s"].idxmin()]
    text = f"{_shape_name(key, params)}: fastest {best['label']} {format_seconds(best['time_s'])}"
    if baseline and baseline != best["label"] and pd.notna(best.get("vs_ratio")):
        text += ", " + versus_words(best["vs_ratio"], best["vs_lo"], best["vs_hi"], baseline)
    if pd.notna(best.get("copy_fraction")):
        text += f", {best['copy_fraction']:.0%} of copy"
    return text


def _norm_lines(contenders: pd.DataFrame, keys: list[str], baseline: str | None) -> list[str]:
    """Per norm, over the shapes where it ran: which implementation is fastest how often, the speedup of
    its fastest over the baseline (median and range), its median fraction of the copy probe. First, which
    norm is fastest in how many shapes."""
    best_per_shape = contenders.loc[contenders.groupby(keys, dropna=False)["time_s"].idxmin()]
    wins = best_per_shape["label"].value_counts()
    lines = [
        f"fastest per shape ({len(best_per_shape)} shapes): "
        + ", ".join(f"{label} {n}" for label, n in wins.items())
    ]
    for norm, g in contenders.groupby("norm", sort=True):
        per_shape = g.loc[g.groupby(keys, dropna=False)["time_s"].idxmin()]
        impls = per_shape["impl"].value_counts()
        text = f"{norm}, {len(per_shape)} shapes: fastest " + ", ".join(f"{i} {n}" for i, n in impls.items())
        ratio = per_shape["vs_ratio"].dropna() if "vs_ratio" in per_shape else []
        if baseline and len(ratio):
            text += f"; median {versus_words(ratio.median(), ref=baseline)}"
            if len(ratio) > 1:
                text += f" (time ratio {ratio.min():.2g}–{ratio.max():.3g})"
        copy = per_shape["copy_fraction"].dropna() if "copy_fraction" in per_shape else []
        if len(copy):
            text += f"; copy {copy.median():.0%}"
        lines.append(text)
    return lines


def _latency_distrust(rec: pd.DataFrame) -> list[str]:
    """Cases whose number should not be taken at face value: high spread, above the copy probe, page
    faults in the timed calls, timed while the machine ran slower than its best (machine_slowdown),
    accuracy against float64 suspect."""
    parts = []
    n = len(rec)
    if "high_spread" in rec and (spread := int(rec["high_spread"].fillna(False).astype(bool).sum())):
        parts.append(f"{spread}/{n} cases spread > 10% (!: IQR of the time, or the paired ratio's interval)")
    # the copy probe timed against its own probe: above 1 is noise there, not implausible
    norms = rec[rec["norm"] != "identity"]
    if "above_copy" in rec and (above := int((norms["above_copy"].fillna(0) > 0).sum())):
        parts.append(f"{above} above the copy probe (⚠)")
    if "faulted" in rec and (faulted := int((rec["faulted"].fillna(0) > 0).sum())):
        parts.append(f"{faulted} page-faulted")
    if "machine_slowdown" in rec and (slowed := int((rec["machine_slowdown"] >= SLOWDOWN_FLAG).sum())):
        parts.append(f"{slowed} on a slowed machine (up to {rec['machine_slowdown'].max():.2f}×)")
    lines = ["distrust: " + "; ".join(parts)] if parts else []
    if "accuracy_suspect" in rec:
        checked = rec[rec["accuracy_suspect"].notna()]
        suspect = checked[checked["accuracy_suspect"] > 0]
        if len(suspect):
            names = suspect["label"].value_counts()
            lines.append(
                f"accuracy SUSPECT (error > 2× eager's, vs float64) in {len(suspect)} of {len(checked)} cases: "
                + ", ".join(f"{label} ({k})" for label, k in names.items())
            )
        elif len(checked):
            lines.append(
                f"accuracy: all {len(checked)} checked cases within 2× PyTorch eager's error vs float64"
            )
    return lines
