"""Each built-in bench kind's lines in the report summary (Bench.headline calls these): the answer to the
question the bench asks, in a few lines, and what to distrust. They read the same numbers as the tables
(analysis/records.py, the benches' own per-case summaries), so the summary never says what a table does not.
"""

from __future__ import annotations

import pandas as pd

from normbench.core.tables import ReportOptions, format_seconds

# The latency shape and settings in the order a person says them ("bf16 fwd+bwd 512×1024 cache=cold").
LATENCY_KEYS = [
    "device",
    "dtype",
    "mode",
    "cache",
    "cuda_graph",
    "input",
    "stat",
    "preset",
    "tokens",
    "hidden",
]
BARE = ("device", "dtype", "mode")  # values that name themselves
MAX_SHAPE_LINES = 6  # more shapes than this: one line per norm instead of one per shape


def latency_headline(rows: pd.DataFrame, opts: ReportOptions) -> list[str]:
    """Per shape: the fastest implementation, its speedup over the baseline and its fraction of the copy
    probe; one line per norm instead when there are many shapes. Then what to distrust."""
    from normbench.analysis.records import case_records
    from normbench.benches import get_bench

    ok = rows[rows["status"] == "ok"]
    if ok.empty:
        return []
    rec = case_records(ok, opts.baseline)
    rec = rec[rec["time_s"].notna()] if "time_s" in rec else rec.iloc[0:0]
    if rec.empty:
        return []
    params = get_bench("latency").params
    keys = [k for k in [*LATENCY_KEYS, *params] if k in rec and k not in ("samples",)]
    keys = list(
        dict.fromkeys(k for k in keys if rec[k].astype(str).nunique() > 1 or k in ("tokens", "hidden"))
    )
    rec = rec.assign(label=rec["norm"] + ":" + rec["impl"])
    contenders = rec[rec["norm"] != "identity"]
    if contenders.empty:
        return []
    baseline = (
        rec["baseline"].dropna().iloc[0] if "baseline" in rec and rec["baseline"].notna().any() else None
    )
    groups = list(contenders.groupby(keys, sort=True, dropna=False))
    if len(groups) <= MAX_SHAPE_LINES:
        lines = [_shape_line(dict(zip(keys, k, strict=True)), g, baseline, params) for k, g in groups]
    else:
        lines = _norm_lines(contenders, keys, baseline)
    return [*lines, *_latency_distrust(rec)]


def _shape_name(key: dict, params) -> str:
    words = [str(key[k]) for k in BARE if k in key]
    if "tokens" in key and "hidden" in key:
        words.append(f"{key['tokens']}×{key['hidden']}")
    for k, v in key.items():
        if k not in (*BARE, "tokens", "hidden") and (k not in params or v != params[k].default):
            words.append(f"{k}={v}")
    return " ".join(words)


def _shape_line(key: dict, group: pd.DataFrame, baseline: str | None, params) -> str:
    best = group.loc[group["time_s"].idxmin()]
    text = f"{_shape_name(key, params)}: fastest {best['label']} {format_seconds(best['time_s'])}"
    if baseline and baseline != best["label"] and pd.notna(best.get("speedup_vs_baseline")):
        text += f", {_times(best['speedup_vs_baseline'])} {baseline}"
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
        speed = per_shape["speedup_vs_baseline"].dropna() if "speedup_vs_baseline" in per_shape else []
        if baseline and len(speed):
            text += f"; median {_times(speed.median())} {baseline} ({speed.min():.2g}–{speed.max():.3g})"
        copy = per_shape["copy_fraction"].dropna() if "copy_fraction" in per_shape else []
        if len(copy):
            text += f"; copy {copy.median():.0%}"
        lines.append(text)
    return lines


def _times(ratio: float) -> str:
    """A speedup to 3 significant figures, never in e-notation: 1.25×, 12.9×, 1738×."""
    return f"{ratio:.0f}×" if ratio >= 100 else f"{ratio:.3g}×"


def _latency_distrust(rec: pd.DataFrame) -> list[str]:
    """Cases whose number should not be taken at face value: high spread, above the copy probe, page
    faults in the timed calls, accuracy against float64 suspect."""
    parts = []
    n = len(rec)
    if "high_spread" in rec and (spread := int(rec["high_spread"].fillna(False).astype(bool).sum())):
        parts.append(f"{spread}/{n} cases IQR > 10% of median (!)")
    if "above_copy" in rec and (above := int((rec["above_copy"].fillna(0) > 0).sum())):
        parts.append(f"{above} above the copy probe (⚠)")
    if "faulted" in rec and (faulted := int((rec["faulted"].fillna(0) > 0).sum())):
        parts.append(f"{faulted} page-faulted")
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


def block_headline(rows: pd.DataFrame, opts: ReportOptions) -> list[str]:
    """Per shape, each block's cost over the Linear alone, cheapest first."""
    ok = rows[(rows["status"] == "ok") & (rows["metric"] == "over_linear")]
    if ok.empty:
        return []
    lines = []
    for (tokens, hidden), g in ok.groupby(["tokens", "hidden"], sort=True):
        costs = g[g["block"] != "linear"].sort_values("value")
        cells = ", ".join(f"{b} {v:+.0%}" for b, v in zip(costs["block"], costs["value"], strict=True))
        lines.append(f"over Linear({hidden}→{hidden}), {tokens} tokens: {cells}")
    return lines


def jacobian_headline(rows: pd.DataFrame, opts: ReportOptions) -> list[str]:
    """Xiong's bound √d/‖x‖ and the centred bound: held everywhere, or failed for which norm on how many
    inputs; the worst disagreement with a closed form."""
    from normbench.jacobian.report import per_input

    data = per_input(rows)
    if data.empty or "ratio_xiong" not in data:
        return []
    data = data.assign(label=data["norm"] + ":" + data["impl"])
    lines = []
    for name, held in (("Xiong's √d/‖x‖", "bound_held"), ("centred √d/‖x−μ‖", "centred_held")):
        if held not in data:
            continue
        fails = data[data[held] == 0].groupby("label").size()
        total = data.groupby("label").size()
        if fails.empty:
            lines.append(f"{name} holds for every input ({len(data)} inputs, {len(total)} norms)")
        else:
            held_for = [n for n in total.index if n not in fails.index]
            lines.append(
                f"{name} FAILS: "
                + ", ".join(f"{n} {fails[n]}/{total[n]}" for n in fails.index)
                + " inputs"
                + (f"; holds: {', '.join(held_for)}" if held_for else "")
            )
    if "rel_err" in data and "closed_form_kind" in data:
        exact = data[data["closed_form_kind"] == "exact"]["rel_err"].abs()
        if len(exact):
            lines.append(f"closed forms: worst |rel err| {exact.max():.1e} over {len(exact)} inputs")
    return lines


def stability_headline(rows: pd.DataFrame, opts: ReportOptions) -> list[str]:
    """ok/stuck/diverged per configuration (only those not all ok named, when many), and the lowest loss."""
    from normbench.benches._lm import varying_keys
    from normbench.benches.stability import case_summary

    runs = rows[rows["status"].isin(["ok", "stuck", "diverged"])]
    if runs.empty:
        return []
    keys = varying_keys(runs, exclude=("seed", "eval_batches", "judge")) or ["depth"]
    cases = runs.drop_duplicates("case_id")[["case_id", *keys]]
    summary = case_summary(runs).merge(cases, on="case_id")
    counts = summary["status"].value_counts()
    configs = list(summary.groupby(keys, sort=True, dropna=False))
    total = ", ".join(f"{counts[s]} {s}" for s in ("ok", "stuck", "diverged") if s in counts)
    lines = [f"{len(summary)} training runs in {len(configs)} configurations ({', '.join(keys)}): {total}"]
    bad = []
    for key, g in configs:
        c = g["status"].value_counts()
        if c.get("ok", 0) < len(g):
            name = " ".join(map(str, key if isinstance(key, tuple) else (key,)))
            bad.append(f"{name} " + "/".join(f"{c.get(s, 0)}" for s in ("ok", "stuck", "diverged")))
    if bad:
        lines.append("not all ok (ok/stuck/diverged): " + ", ".join(bad))
    finite = summary[summary["status"] == "ok"]
    if len(finite):
        best = finite.groupby(keys, dropna=False)["final_loss"].mean().sort_values()
        name = best.index[0] if isinstance(best.index[0], tuple) else (best.index[0],)
        lines.append(
            f"lowest mean final loss: {' '.join(map(str, name))} {best.iloc[0]:.3f} nats"
            + (f" (highest ok: {best.iloc[-1]:.3f})" if len(best) > 1 else "")
        )
    return lines
