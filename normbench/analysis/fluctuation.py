"""Batch-statistics fluctuation (PowerNorm, Shen et al. 2020, §3): for each BatchNorm / PowerNorm layer of the
stability runs, how far the batch's statistics sit from the running statistics during training.

Details: docs/methodology.md, "Training stability"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from normbench.analysis.runs import config_keys, norm_sort_key, training_runs

if TYPE_CHECKING:
    import pandas as pd

    from normbench.core.tables import Table

BURN_IN = 0.1  # fraction of the run's steps left out at the start
METRICS = {
    "bn_mean_rel_dist": "‖μ_B − μ‖/‖μ‖",
    "bn_mean_rel_dist_iid": "i.i.d. floor",
    "mean_over_iid": "mean / i.i.d.",
    "bn_var_rel_dist": "‖σ²_B − σ²‖/‖σ²‖",
    "bn_mean_shift_sd": "|μ_B − μ|/σ (rms)",
    "bn_var_shift": "|σ²_B/σ² − 1| (rms)",
    "pn_qm_rel_dist": "PN ‖Q_B − Q‖/‖Q‖",
}
STORED = [m for m in METRICS if m != "mean_over_iid"]


def per_run_medians(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (case, layer, site): the median over steps after the burn-in of each fluctuation metric,
    and of the per-step ratio bn_mean_rel_dist / bn_mean_rel_dist_iid; with norm, seed and the case's
    configuration columns."""
    import pandas as pd

    rows = frame[(frame["bench"] == "stability") & frame["metric"].isin(STORED) & frame["step"].notna()]
    rows = rows[~rows["status"].isin(["failed", "skipped", "unavailable"])]
    if rows.empty:
        return pd.DataFrame()
    rows = rows.assign(site=rows["site"].fillna("—") if "site" in rows else "—")
    last = rows.groupby("case_id")["step"].transform("max")
    rows = rows[rows["step"] >= BURN_IN * last]
    wide = rows.pivot_table(
        index=["case_id", "layer", "site", "step"], columns="metric", values="value", aggfunc="first"
    )
    if {"bn_mean_rel_dist", "bn_mean_rel_dist_iid"} <= set(wide.columns):
        wide["mean_over_iid"] = wide["bn_mean_rel_dist"] / wide["bn_mean_rel_dist_iid"]
    medians = wide.groupby(level=["case_id", "layer", "site"]).median().reset_index()
    runs = training_runs(frame)
    return medians.merge(runs.drop(columns=["status"]), on="case_id", how="inner")


def fluctuation_records(frame: pd.DataFrame) -> pd.DataFrame:
    """Per norm, configuration, layer and site: the seed mean of each run's median, and the seed count."""
    import pandas as pd

    med = per_run_medians(frame)
    if med.empty:
        return pd.DataFrame()
    keys = [*config_keys(training_runs_of(med)), "layer", "site"]
    values = [m for m in METRICS if m in med.columns]
    out = med.groupby(keys, dropna=False)[values].mean()
    out["seeds"] = med.groupby(keys, dropna=False)["seed"].nunique()
    out = out.reset_index()
    out["layer"] = out["layer"].astype(int)
    order = sorted(range(len(out)), key=lambda i: (norm_sort_key(out.at[i, "norm"]), i))
    return out.loc[order].reset_index(drop=True)


def training_runs_of(med: pd.DataFrame) -> pd.DataFrame:
    """The runs behind the medians (one row per case), for config_keys: only the norms with statistics."""
    return med.drop_duplicates("case_id")


def fluctuation_table(frame: pd.DataFrame) -> Table | None:
    import pandas as pd

    from normbench.core.tables import Table

    rec = fluctuation_records(frame)
    if rec.empty:
        return None
    keys = [c for c in rec.columns if c not in METRICS and c != "seeds"]
    shown = rec[keys].astype(str)
    for metric, title in METRICS.items():
        if metric in rec:
            shown[title] = rec[metric].map(lambda v: "—" if pd.isna(v) else f"{v:.3g}")
    shown["seeds"] = rec["seeds"]
    return Table(
        "Norms: batch-statistics fluctuation during training (BatchNorm, PowerNorm)",
        shown,
        [
            f"Per layer and site: median over the training steps (the first {BURN_IN:.0%} left out: the running "
            "statistics are still leaving their initial values), mean over seeds. ‖μ_B − μ‖/‖μ‖: the batch's "
            "mean against the running mean (PowerNorm §3, Fig. 2's distance, relative); i.i.d. floor: the same "
            "distance expected if the batch's tokens were independent draws (√(Σ_c var_c / n)/‖μ‖, n tokens); "
            "mean / i.i.d. = r: the batch behaves like n/r² independent tokens. |μ_B − μ|/σ: the batch mean's offset "
            "in running-sd units (rms over channels), the train-vs-inference shift of the normalized output. "
            "PN: PowerNorm's quadratic mean "
            "Q = mean(x²) per channel (the paper's ψ²) against its running value.",
        ],
    )
