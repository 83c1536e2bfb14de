"""Report tables of the jacobian bench: a summary over norms, then one table per norm whose rows are the
input distribution × d (and any other parameter the run varied), with the median and maximum of
measured/bound for Xiong's √d/‖x‖ and the centred √d/‖x − mean‖, the agreement with the closed form,
and a plain verdict on whether Xiong's bound held. Reads only stored rows; imports no torch."""

from __future__ import annotations

import math

import pandas as pd

from normbench.benches._jacobian.inputs import DISTS
from normbench.core.tables import ReportOptions, Table, column_unit, in_unit

# Parameters that can distinguish rows of one norm's table, in display order (d last: "dist × d").
KEYS = ["dist", "mean", "scale", "df", "outlier", "gain", "eps", "dtype", "batch", "method", "d"]
ALWAYS = {"dist", "d", "method"}
SHOWN_STATUSES = ("ok", "not_converged")


def per_input(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (case, input): every metric as a column, next to the case's parameters."""
    rows = frame[frame["status"].isin(SHOWN_STATUSES) & frame["sample"].notna() & frame["metric"].notna()]
    if rows.empty:
        return pd.DataFrame()
    wide = rows.pivot_table(index=["case_id", "sample"], columns="metric", values="value", aggfunc="first")
    labels = ["norm", "impl", "status", "method", "closed_form_kind", "closed_form_regime", *KEYS]
    labels = [c for c in labels if c in rows.columns]
    meta = rows.drop_duplicates("case_id").set_index("case_id")[list(dict.fromkeys(labels))]
    return wide.reset_index().join(meta, on="case_id")


def _ratio(r: float) -> str:
    """4 significant digits, but enough to show how far past 1 a ratio near 1 is (1.00003, not 1)."""
    return f"{r:.6f}" if 0.99 < r < 1.01 and r != 1 else f"{r:.4g}"


def _bound_cell(group: pd.DataFrame, ratio: str, held: str) -> str:
    """'held', or 'FAILS k/n (max r×)': the inputs whose measured/bound exceeded 1 (beyond rounding)."""
    failed = group.loc[group[held] == 0, ratio]
    return "held" if failed.empty else f"FAILS {len(failed)}/{len(group)} (max {_ratio(failed.max())}×)"


def _cell(values: pd.Series | None, how: str, fmt: str) -> str:
    """values.median() or .max() formatted, or — when the metric was not measured for these inputs."""
    if values is None or values.isna().all():
        return "—"
    return format(getattr(values, how)(), fmt)


def _closed_cell(group: pd.DataFrame) -> str:
    if "rel_err" not in group.columns or (group["closed_form_kind"] == "none").all():
        return "no closed form"
    err = group["rel_err"]
    if (group["closed_form_kind"] == "bound").all():  # max|γ|/s: the measurement must stay below it
        worst = err.max()
        return f"≤ bound (gap {-worst:.1e})" if worst <= 1e-9 else f"ABOVE bound by {worst:.1e}"
    worst = err.abs().max()
    return "inf" if math.isinf(worst) else f"{worst:.1e}"


def norm_table(name: str, data: pd.DataFrame) -> Table:
    batch_layout = "coupling" in data.columns and data["coupling"].notna().any()
    keys = [k for k in KEYS if k in data.columns and (batch_layout or k != "batch")]
    varied = [k for k in keys if k in ALWAYS or data[k].astype(str).nunique() > 1]
    fixed = [k for k in keys if k not in varied and data[k].notna().any()]
    any_free = (data["method"] == "matrix_free").any()
    data = data.assign(_order=data["dist"].map({d: i for i, d in enumerate(DISTS)}))
    out = []
    for key, g in data.groupby(["_order", *varied], sort=True, dropna=False):
        key = key[1:]
        row = dict(zip(varied, key, strict=True))
        conv = g[g["converged"] == 1]
        row["inputs"] = f"{len(g)}" if len(conv) == len(g) else f"{len(g)} ({len(g) - len(conv)} unconverged)"
        stats = conv if not conv.empty else g
        row["σ_max med"] = f"{stats['sigma_max'].median():.4g}"
        row["Xiong med"] = _ratio(stats["ratio_xiong"].median())
        row["Xiong max"] = _ratio(stats["ratio_xiong"].max())
        row["centred max"] = _ratio(stats["ratio_centred"].max())
        row["vs closed form (max rel err)"] = _closed_cell(stats)
        row["Xiong's √d/‖x‖"] = _bound_cell(stats, "ratio_xiong", "bound_held")
        row["centred √d/‖x−μ‖"] = _bound_cell(stats, "ratio_centred", "centred_held")
        if batch_layout:  # the dense-only structure metrics are absent (—) for matrix-free cases
            row["coupling ‖J−D‖/‖J‖"] = _cell(stats.get("coupling"), "median", ".3g")
            row["x-channel max"] = _cell(stats.get("cross_channel_max"), "max", ".1g")
            row["per-channel rel err"] = _cell(stats.get("channel_rel_err_max"), "max", ".1e")
        if any_free:
            row["iters max"] = (
                f"{int(g['iterations'].max())}" if (g["method"] == "matrix_free").any() else "—"
            )
        row["time/input"] = g["time"].median()  # formatted below, in one unit for the column
        out.append(row)
    unit, scale = column_unit([r["time/input"] for r in out])
    for r in out:
        r[f"time/input ({unit})"] = in_unit(r.pop("time/input"), scale)
    notes = [
        "Ratios are measured σ_max / bound over the case's inputs (converged ones only when some did not "
        "converge); a ratio above 1 means the bound failed for that input. Bounds are scaled by max|γ|."
    ]
    if fixed:
        notes.append("All rows: " + ", ".join(f"{k}={data[k].dropna().iloc[0]}" for k in fixed) + ".")
    if name.startswith("batchnorm:train"):
        notes.append(
            "BatchNorm train: one input is a batch; bounds use the batch axis (√m/‖x_c‖ per channel c). "
            "coupling = ‖J − D‖₂/‖J‖₂ with D the per-sample blocks a per-sample Jacobian would see."
        )
    return Table(f"Jacobian σ_max: {name}", pd.DataFrame(out), notes)


def summary_table(data: pd.DataFrame) -> Table:
    out = []
    for name, g in data.groupby("label", sort=True):
        conv = g[g["converged"] == 1]
        exact = conv[conv["closed_form_kind"] == "exact"]
        row = {
            "norm": name,
            "cases": g["case_id"].nunique(),
            "inputs": len(g),
            "unconverged": int((g["converged"] == 0).sum()),
        }
        row["Xiong's bound fails"] = f"{int((conv['bound_held'] == 0).sum())}/{len(conv)}"
        row["worst Xiong ratio"] = _ratio(conv["ratio_xiong"].max())
        row["centred bound fails"] = f"{int((conv['centred_held'] == 0).sum())}/{len(conv)}"
        row["worst centred ratio"] = _ratio(conv["ratio_centred"].max())
        eps_term = exact.get("closed_form_regime", pd.Series("general", index=exact.index)) == "eps-term"
        for label, part in (("", exact[~eps_term]), ("ε-term ", exact[eps_term])):
            for dt in ("fp64", "fp32"):
                has = "rel_err" in part.columns  # absent when no norm of the run has a closed form
                errs = part.loc[part["dtype"] == dt, "rel_err"].abs() if has else pd.Series(dtype=float)
                row[f"max rel err {label}{dt}"] = f"{errs.max():.1e}" if not errs.empty else "—"
        bound = conv[conv["closed_form_kind"] == "bound"]
        above = bound[bound["rel_err"] > 1e-9] if "rel_err" in bound.columns else bound.iloc[:0]
        row["above γ-bound"] = f"{len(above)}"
        out.append(row)
    notes = [
        "Xiong et al. 2020, Lemma 3: ‖J_LN(x)‖₂ = O(√d/‖x‖₂), taken with constant 1 (its zero-mean equality "
        "case). rel err = (measured − closed form)/closed form where the closed form is exact; the ε-term "
        "columns are the rank-deficient cases (LayerNorm d=2, RMSNorm d=1, BatchNorm train m=2) where σ_max is "
        "the ε-suppressed direction, O(ε/s³), left over from O(1/s) entries that cancel; "
        "'above γ-bound' counts inputs whose σ_max exceeded max|γ|/√(var+ε) (should be 0)."
    ]
    return Table("Jacobian σ_max: summary per norm", pd.DataFrame(out), notes)


def jacobian_tables(frame: pd.DataFrame, opts: ReportOptions) -> list[Table]:
    data = per_input(frame)
    if data.empty:
        return []
    data["label"] = data["norm"] + ":" + data["impl"]
    tables = [summary_table(data)]
    for name, g in data.groupby("label", sort=True):
        tables.append(norm_table(name, g))
    if opts.machine:
        tables[0].notes.append(f"Machine: {opts.machine}.")
    return tables


def jacobian_headline(rows: pd.DataFrame, opts) -> list[str]:
    """Xiong's bound √d/‖x‖ and the centred bound: held everywhere, or failed for which norm on how many
    inputs; the worst disagreement with a closed form."""
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
