"""Report tables of the block bench: per shape, each block's time (the case's statistic, median or min) and
its cost over the Linear alone; then the folded-BatchNorm check and every block's error against float64."""

from __future__ import annotations

import pandas as pd

from normbench.benches._block.names import FOLDED, block_names
from normbench.core.tables import Table, column_unit, in_unit

KEYS = ["device", "dtype", "cache", "stat", "tokens", "d"]


def block_tables(frame, opts) -> list[Table]:
    ok = frame[frame["status"] == "ok"]
    if ok.empty:
        return []
    keys = [k for k in KEYS if k in ok.columns]
    scalar = ok[ok["sample"].isna()]
    wide = scalar.pivot_table(
        index=keys + ["block"], columns="metric", values="value", aggfunc="first"
    ).reset_index()
    stored = set(wide["block"])
    known = [b for b in block_names() if b in stored]
    blocks = known + sorted(stored - set(known))  # registry order; blocks of norms not installed now last
    time_rows, acc_rows = [], []
    times: dict[str, list] = {b: [] for b in blocks}  # per block column: (seconds, "(+x%)") per row
    for key, group in wide.groupby(keys, sort=True):
        cells = group.set_index("block")
        row = dict(zip(keys, key, strict=True))
        acc = dict(row)
        for b in blocks:
            if b not in cells.index:
                times[b].append((None, ""))
                acc[b] = "—"
                continue
            t = cells.loc[b, f"time_{key[keys.index('stat')]}" if "stat" in keys else "time_median"]
            extra = (
                f" ({cells.loc[b, 'over_linear']:+.0%})"
                if b != "linear" and "over_linear" in cells.columns
                else ""
            )
            times[b].append((t, extra))
            err = cells.loc[b, "err_abs"] if "err_abs" in cells.columns else float("nan")
            acc[b] = f"{err:.2e}" if err == err else "no reference"
        for b in [b for b in blocks if b.endswith(FOLDED) and b in cells.index]:
            if "fold_max_diff" in cells.columns:
                r = cells.loc[b]
                acc[f"{b} vs unfolded"] = f"{r['fold_max_diff']:.2e} ≤ {r['fold_tolerance']:.2e}"
        time_rows.append(row)
        acc_rows.append(acc)
    for b, column in times.items():  # one unit per column, from its median
        unit, scale = column_unit([t for t, _ in column])
        for row, (t, extra) in zip(time_rows, column, strict=True):
            row[f"{b} ({unit})"] = in_unit(t, scale) + extra
    notes = [
        f"Time = the statistic (stat) of raw samples under torch.inference_mode; (+x%) = the block's time over the Linear alone, "
        f"timed in the same case, in alternation with the block. Machine: {opts.machine}."
    ]
    acc_notes = [
        "Max |y - y_float64| of each block (the float64 block is x W^T + b then the norm's reference). "
        "<norm>_folded vs unfolded: max difference ≤ tolerance (3 x the unfolded block's error + a quarter "
        "spacing of the dtype); a fold outside it fails its case. no reference = the norm declares no "
        "float64 reference."
    ]
    return [
        Table("Block: Linear(d->d) + norm at inference, time per call", pd.DataFrame(time_rows), notes),
        Table("Block: error vs float64, and the BatchNorm fold check", pd.DataFrame(acc_rows), acc_notes),
    ]


def block_headline(rows, opts) -> list[str]:
    """Per shape, each block's cost over the Linear alone, cheapest first."""
    ok = rows[(rows["status"] == "ok") & (rows["metric"] == "over_linear")]
    if ok.empty:
        return []
    lines = []
    for (tokens, d), g in ok.groupby(["tokens", "d"], sort=True):
        costs = g[g["block"] != "linear"].sort_values("value")
        cells = ", ".join(f"{b} {v:+.0%}" for b, v in zip(costs["block"], costs["value"], strict=True))
        lines.append(f"over Linear({d}→{d}), {tokens} tokens: {cells}")
    return lines
