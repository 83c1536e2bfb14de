"""The report as data (`report --format csv|json`): one record per case (per input or layer where a case
has several), with the case's parameters and every summary metric as a named numeric field. No display
strings: the github/plain/md/latex tables are views of these numbers.

Details: docs/suites-and-results.md, "Reading results: more"."""

from __future__ import annotations

import numpy as np
import pandas as pd

from normbench.benches import all_benches
from normbench.norms import SPEEDUP_REFERENCES
from normbench.results.schema import RESERVED

WIDE_LABELS = {"tensor"}
KEYS = ["run_id", "bench", "norm", "impl", "status", "error", "case_id"]


def bench_order(kind: str) -> tuple[int, str]:
    """The report's order of bench kinds: latency first, then block, jacobian, init, stability, others."""
    order = ("latency", "block", "jacobian", "init", "stability")
    return (order.index(kind) if kind in order else len(order), kind)


def field_name(metric: str, unit) -> str:
    return f"{metric}_s" if unit == "s" and not metric.endswith("_s") else metric


def case_records(frame: pd.DataFrame, baseline: str | None = None) -> pd.DataFrame:
    """One record per case (and label), every summary metric a column; see the module docstring."""
    benches = all_benches()
    rows = frame[frame["step"].isna() & frame["metric"].notna()]
    if "process" in rows:  # one process's values: the case's record holds the values over its processes
        rows = rows[rows["process"].isna()]
    medians = set(zip(rows["case_id"], rows["metric"], strict=True))
    summarized = [(c, f"{m}_median") in medians for c, m in zip(rows["case_id"], rows["metric"], strict=True)]
    raw = rows["sample"].notna().to_numpy(dtype=bool) & np.array(summarized, dtype=bool)
    rows = rows[~raw]
    out = []
    for kind in sorted(dict.fromkeys(rows["bench"]), key=bench_order):
        bench = benches.get(kind)
        part = rows[rows["bench"] == kind]
        params = [p for p in (bench.params if bench else {}) if p in part and part[p].notna().any()]
        # a label is a key when one case stores a metric several times under it (layer, site, an input);
        # a tensor is a field suffix instead (err_abs_y, err_ratio_dx): one record per latency case
        labels = [
            c
            for c in ([*bench.labels, "sample"] if bench else ["sample"])
            if c in part
            and c not in WIDE_LABELS
            and part.groupby(["case_id", "metric"])[c].nunique().max() > 1
        ]
        taken = set(KEYS) | set(params) | set(labels)  # a metric named like a parameter: <metric>_value
        names = pd.Series(
            [n if n not in taken else f"{n}_value" for n in map(field_name, part["metric"], part["unit"])],
            index=part.index,
        )
        for label in WIDE_LABELS & set(part.columns):
            has = part[label].notna()
            names[has] = names[has] + "_" + part.loc[has, label].astype(str)
        wide = part.assign(field=names).pivot_table(
            index=["case_id", *labels], columns="field", values="value", aggfunc="first", dropna=False
        )
        wide = wide.dropna(how="all").reset_index()
        meta = part.drop_duplicates("case_id").set_index("case_id")[[*KEYS[:-1], *params]]
        records = meta.join(wide.set_index("case_id"), how="right").reset_index()
        cases_without_metrics = meta.index.difference(records["case_id"])
        if len(cases_without_metrics):
            records = pd.concat([records, meta.loc[cases_without_metrics].reset_index()], ignore_index=True)
        if kind == "latency":
            records = _latency_fields(records, params, baseline)
        order = [c for c in ("norm", "impl", *params, *labels) if c in records]
        records = records.sort_values(order, na_position="first", kind="stable").reset_index(drop=True)
        out.append(records[[*KEYS, *[c for c in records.columns if c not in KEYS]]])
    if not out:
        return pd.DataFrame(columns=KEYS)
    merged = pd.concat(out, ignore_index=True)
    return merged.drop(columns=[c for c in merged.columns if c in RESERVED and c not in KEYS + ["sample"]])


def _latency_fields(records: pd.DataFrame, params: list[str], baseline: str | None) -> pd.DataFrame:
    """time_s = the case's statistic; high_spread; speedup of the baseline's time over this case's."""
    from normbench.core.stats import high_spread

    if "time_median_s" not in records:
        return records
    stat = records["stat"] if "stat" in records else pd.Series("median", index=records.index)
    time = [records.at[i, f"time_{s}_s"] if f"time_{s}_s" in records else None for i, s in stat.items()]
    records = records.assign(time_s=pd.to_numeric(pd.Series(time, index=records.index)))
    spread = records.get("time_iqr_s", pd.Series(0.0, index=records.index)).fillna(0.0)
    records["high_spread"] = [
        bool(high_spread(m, q)) if pd.notna(m) else None
        for m, q in zip(records["time_median_s"], spread, strict=True)
    ]
    if "above_copy" in records:  # the copy probe timed against itself: above 1 is noise, not implausible
        records.loc[records["norm"] == "identity", "above_copy"] = np.nan
    label = records["norm"] + ":" + records["impl"]
    base = baseline or next((b for b in SPEEDUP_REFERENCES if b in set(label)), None)
    if base is None:
        return records
    keys = [k for k in params if k in records]  # the baseline's case has the same parameters
    base_time = records[label == base].groupby(keys, dropna=False)["time_s"].first().rename("_base")
    records = records.join(base_time, on=keys)
    records["speedup_vs_baseline"] = records.pop("_base") / records["time_s"]
    records["baseline"] = base
    return records
