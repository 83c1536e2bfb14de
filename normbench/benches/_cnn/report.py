"""The cnn bench's report: one summary row per run (CNN.per_case, which the claims read) and one table per
norm and configuration (held-out loss and accuracy over seeds with their 95% intervals, the first
BatchNorm's batch-vs-running distance)."""

from __future__ import annotations

import json
import math

import pandas as pd

from normbench.core.tables import Table
from normbench.norms import variant_label

BURN_IN = 0.1  # as analysis/fluctuation.py: the running statistics are still leaving (0, 1) before
SETTINGS = ("model", "hidden", "width", "batch", "steps", "lr", "optimizer", "momentum", "warmup")
SETTINGS += ("train_images", "data_seed")


FIRST_BN = ("bn_mean_shift_sd", "bn_var_shift", "bn_mean_rel_dist", "bn_mean_rel_dist_iid")


def _median(rows, metric: str, layer) -> float:
    v = rows.loc[(rows["metric"] == metric) & (rows["layer"] == layer), "value"]
    return float(v.median()) if len(v) else math.nan


def cnn_runs(rows) -> pd.DataFrame:
    """One row per cnn case: norm (norm:impl for a named implementation), status, every parameter, final
    held-out loss, accuracy, training time, and at the first BatchNorm the median after the burn-in of the
    batch mean's shift in running-sd units, the variance's, and ‖μ_B − μ‖ over its i.i.d. floor."""
    out = []
    for case_id, g in rows.groupby("case_id", sort=False):
        head = g.iloc[0]
        final = {
            m: g.loc[g["metric"] == m, "value"].mean() for m in ("final_loss", "accuracy", "train_wall_s")
        }
        late = g[g["step"] >= BURN_IN * g["step"].max()]
        first_layer = late.loc[late["metric"] == "bn_mean_shift_sd", "layer"].min()
        first = {m: _median(late, m, first_layer) for m in FIRST_BN}
        out.append(
            {
                "case_id": case_id,
                "norm": variant_label(head["norm"], head.get("impl")),
                "status": head["status"],
                **json.loads(head["params"]),
                **final,
                "first_bn_shift": first["bn_mean_shift_sd"],
                "first_bn_var_shift": first["bn_var_shift"],
                "first_bn_over_iid": first["bn_mean_rel_dist"] / first["bn_mean_rel_dist_iid"],
            }
        )
    return pd.DataFrame(out)


def _ci(values) -> str:
    """mean [95% Student-t interval] over seeds."""
    from scipy.stats import t

    v = [float(x) for x in values if not math.isnan(x)]
    if not v:
        return "—"
    m = sum(v) / len(v)
    if len(v) == 1:
        return f"{m:.3f}"
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))
    half = float(t.ppf(0.975, len(v) - 1)) * sd / math.sqrt(len(v))
    return f"{m:.3f} [{m - half:.3f}, {m + half:.3f}]"


def cnn_tables(frame) -> list[Table]:
    rows = frame[frame["bench"] == "cnn"]
    if rows.empty:
        return []
    runs = cnn_runs(rows)
    keys = ["norm"] + [k for k in SETTINGS if k in runs and runs[k].astype(str).nunique() > 1]
    table = []
    for key, g in runs.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        counts = g["status"].value_counts()
        table.append(
            {
                **dict(zip(keys, key, strict=True)),
                "runs": len(g),
                "status": ", ".join(f"{s} {n}" for s, n in counts.items()),
                "held-out loss [95% CI]": _ci(g["final_loss"]),
                "accuracy [95% CI]": _ci(g["accuracy"]),
                "first BN |μ_B − μ|/σ": "—"
                if g["first_bn_shift"].isna().all()
                else f"{g['first_bn_shift'].mean():.3g}",
                "s/run": f"{g['train_wall_s'].mean():.1f}",
            }
        )
    return [
        Table(
            "CNN control: held-out loss and accuracy per norm (generated shapes)",
            pd.DataFrame(table),
            [
                "Held-out cross-entropy (nats) and accuracy after training, mean over seeds with the 95% "
                "t-interval; chance is ln 10 = 2.303 nats, 10% accuracy. BatchNorm normalizes each channel over "
                "batch × pixels, LayerNorm each image over the layer's C·H·W units (models/cnn.py).",
                "first BN |μ_B − μ|/σ: the first BatchNorm's batch mean against its running mean in running-sd "
                "units (rms over channels), median over the steps after the first 10% (PowerNorm Fig. 2's "
                "distance, scale-free).",
            ],
            bench="cnn",
        )
    ]


def cnn_headline(rows) -> list[str]:
    """The report summary's line: held-out loss and accuracy per norm (seed means), best first."""
    runs = cnn_runs(rows[rows["bench"] == "cnn"]) if len(rows) else pd.DataFrame()
    runs = runs[runs["status"] == "ok"] if not runs.empty else runs
    if runs.empty:
        return []
    lines = []
    models = runs["model"].fillna("cnn") if "model" in runs else pd.Series("cnn", index=runs.index)
    for model, g in runs.groupby(models, sort=True):  # the CNN and the MLP are never averaged together
        means = g.groupby("norm")[["final_loss", "accuracy"]].mean().sort_values("final_loss")
        cells = [f"{norm} {r['final_loss']:.3f} nats, {r['accuracy']:.1%}" for norm, r in means.iterrows()]
        what = "" if models.nunique() == 1 else f"{model}: "
        lines.append(f"{what}held-out loss per norm ({len(g)} runs, seed means): " + "; ".join(cells))
    return lines
