"""The trade-off table: per norm (and placement, objective, and whatever else the training runs vary), what
the norm does to training (held-out loss, mean and 95% t-interval over seeds, status counts) next to what
it costs at inference (the Linear + norm block's time from the same run, folded where the norm folds).

Details: docs/methodology.md, "The block bench"."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from normbench.core.tables import Table

from normbench.analysis.claims.stats import mean_ci
from normbench.analysis.runs import config_keys, norm_sort_key, stability_param_names, training_runs

SHAPE_KEYS = ("device", "dtype", "cache", "stat", "tokens", "d")


def block_times(frame: pd.DataFrame, d: int | None) -> tuple[pd.DataFrame, dict]:
    """(block -> time_median, over_linear, linear_time_median, in seconds / ratio), and the shape shown."""
    import pandas as pd

    rows = frame[(frame["bench"] == "block") & (frame["status"] == "ok") & frame["sample"].isna()]
    if rows.empty or "block" not in rows:
        return pd.DataFrame(), {}
    cases = rows.drop_duplicates("case_id")
    shapes = pd.DataFrame([json.loads(p) for p in cases["params"]], index=cases.index)
    shapes["case_id"] = cases["case_id"]
    if d is not None and (shapes["d"] == d).any():
        shapes = shapes[shapes["d"] == d]
    keys = [k for k in SHAPE_KEYS if k in shapes]
    default = (shapes["device"] == "cpu").astype(int) + (shapes["dtype"] == "fp32").astype(int)
    ranked = shapes.assign(_pref=-default, _tokens=-shapes["tokens"]).sort_values(["_pref", "_tokens", *keys])
    shape = ranked.iloc[0][keys].to_dict()
    chosen = ranked[(ranked[keys] == pd.Series(shape)).all(axis=1)]["case_id"]
    sel = rows[rows["case_id"].isin(chosen)]
    wide = sel.pivot_table(index="block", columns="metric", values="value", aggfunc="first")
    want = ["time_median", "over_linear", "linear_time_median"]
    return wide.reindex(columns=want), shape


def tradeoff_records(frame: pd.DataFrame) -> pd.DataFrame:
    """The numbers of the table, one record per configuration: seconds in `_s` fields, ratios as ratios."""
    import pandas as pd

    if not {"stability", "block"} <= set(frame["bench"].unique()):
        return pd.DataFrame()
    runs = training_runs(frame)
    if runs.empty:
        return pd.DataFrame()
    d = int(runs["d"].mode().iloc[0]) if runs["d"].nunique() == 1 else None
    blocks, shape = block_times(frame, d)
    if blocks.empty:
        return pd.DataFrame()
    keys = config_keys(runs)
    out = []
    for key, g in runs.groupby(keys, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(keys, key, strict=True))
        counts = g["status"].value_counts()
        kept = g[(g["status"] != "diverged") & g["final_loss"].map(lambda v: math.isfinite(v))]
        mean, low, high = mean_ci(kept["final_loss"])
        norm = row["norm"]
        folded = f"{norm}_folded"
        row.update(
            {
                "seeds": int(g["seed"].nunique()),
                "runs_in_mean": len(kept),
                "ok": int(counts.get("ok", 0)),
                "stuck": int(counts.get("stuck", 0)),
                "diverged": int(counts.get("diverged", 0)),
                "final_loss_mean": mean,
                "final_loss_ci_low": low,
                "final_loss_ci_high": high,
                "block_time_s": _cell(blocks, norm, "time_median"),
                "block_over_linear": _cell(blocks, norm, "over_linear"),
                "folded_time_s": _cell(blocks, folded, "time_median"),
                "folded_over_linear": _cell(blocks, folded, "over_linear"),
                "linear_time_s": _cell(blocks, norm, "linear_time_median")
                if norm in blocks.index
                else _cell(blocks, "linear", "time_median"),
                **{f"block_{k}": v for k, v in shape.items()},
            }
        )
        out.append(row)
    table = pd.DataFrame(out)
    order = sorted(range(len(table)), key=lambda i: (norm_sort_key(table.at[i, "norm"]), i))
    rest = [k for k in keys if k != "norm"]
    table = table.loc[order].reset_index(drop=True)
    return table.sort_values(rest, kind="stable").reset_index(drop=True) if rest else table


def _cell(blocks, block: str, metric: str) -> float:
    return float(blocks.at[block, metric]) if block in blocks.index else math.nan


def tradeoff_table(frame: pd.DataFrame, records: pd.DataFrame | None = None) -> Table | None:
    """The display view of tradeoff_records (`records`, when the caller has them already): loss ± CI
    half-width, status counts, times in µs."""
    import pandas as pd

    from normbench.core.tables import Table

    rec = tradeoff_records(frame) if records is None else records
    if rec.empty:
        return None
    keys = [c for c in rec.columns if c in ("norm", *stability_param_names())]
    shown = []
    for r in rec.to_dict("records"):
        row = {k: r[k] for k in keys if not k.startswith("block_")}
        half = (r["final_loss_ci_high"] - r["final_loss_ci_low"]) / 2
        row["final loss (nats)"] = (
            "—"
            if math.isnan(r["final_loss_mean"])
            else f"{r['final_loss_mean']:.3f}" + (f" ± {half:.3f}" if r["runs_in_mean"] > 1 else "")
        )
        row["seeds"] = r["seeds"]
        row["ok/stuck/diverged"] = f"{r['ok']}/{r['stuck']}/{r['diverged']}"
        row["block µs"] = _us(r["block_time_s"], r["block_over_linear"])
        row["folded µs"] = _us(r["folded_time_s"], r["folded_over_linear"])
        row["Linear µs"] = _us(r["linear_time_s"])
        shown.append(row)
    shape = ", ".join(
        f"{k[6:]}={rec.at[0, k]}" for k in rec.columns if k.startswith("block_") and k[6:] in SHAPE_KEYS
    )
    notes = [
        "final loss: held-out loss after training (nats/token; masked objective: mean cross-entropy over the "
        "masked positions), mean ± half-width of the 95% t-interval over seeds; diverged runs are counted in "
        "ok/stuck/diverged and left out of the mean.",
        f"block µs: median time of Linear(d→d) + the norm at inference, from this run's block bench ({shape}); "
        "(+x%) = over the Linear alone, timed in alternation with it; folded µs: the norm folded into the "
        "Linear's weights (— where the norm does not fold). Times from a shared machine: compare within a column.",
    ]
    return Table(
        "Norms: what each costs at inference and what it does to training", pd.DataFrame(shown), notes
    )


def _us(seconds: float, over: float = math.nan) -> str:
    if seconds is None or math.isnan(seconds):
        return "—"
    return f"{seconds * 1e6:.1f}" + ("" if math.isnan(over) else f" ({over:+.0%})")
