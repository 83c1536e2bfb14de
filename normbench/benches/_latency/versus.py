"""The report's ratio of one implementation's time to another's at the same parameters, paired wherever
the run allows: the stored `time_vs_ref` when the other is the case's reference; the per-round ratio of
the two cases' raw samples when one round set timed both (same `round_set` label); else, unpaired, the
ratio of their times (no interval: two timings taken apart in time share none of the machine's phases)."""

from __future__ import annotations

import math

import pandas as pd

from normbench.timing.paired import median_interval

COLUMNS = ["vs_ratio", "vs_lo", "vs_hi", "vs_paired"]


def versus(ok: pd.DataFrame, cases: pd.DataFrame, other: str, keys: list[str]) -> pd.DataFrame:
    """For each row of `cases` (one per case: case_id, keys, `label` = norm:impl, `time`): its time over
    `other`'s at the same keys (`vs_ratio`), the 95% interval (`vs_lo`, `vs_hi`; NaN when unpaired) and
    whether the ratio is paired. Indexed like `cases`."""
    refs = _labels(ok, "time_vs_ref_median", "reference")
    sets = _labels(ok, None, "round_set")
    raw = ok[(ok["metric"] == "time") & ok["sample"].notna()].sort_values("sample")
    samples = {cid: list(g["value"]) for cid, g in raw.groupby("case_id")}
    by_key = {
        _key(r, keys): r for _, r in cases[cases["label"] == other].iterrows()
    }  # the other implementation's case at each set of keys
    out = []
    for _, c in cases.iterrows():
        b = by_key.get(_key(c, keys))
        out.append(_one(c, b, other, refs, sets, samples))
    return pd.DataFrame(out, index=cases.index, columns=COLUMNS)


def _one(c, b, other: str, refs: dict, sets: dict, samples: dict) -> tuple:
    nan = math.nan
    if c["label"] == other:
        return 1.0, 1.0, 1.0, True
    if refs.get(c["case_id"]) == other and pd.notna(c.get("time_vs_ref_median")):
        return c["time_vs_ref_median"], c.get("time_vs_ref_lo", nan), c.get("time_vs_ref_hi", nan), True
    if b is None:
        return nan, nan, nan, False
    mine, theirs = samples.get(c["case_id"], []), samples.get(b["case_id"], [])
    same_set = sets.get(c["case_id"]) is not None and sets.get(c["case_id"]) == sets.get(b["case_id"])
    if same_set and mine and len(mine) == len(theirs):
        mid, lo, hi = median_interval([x / y for x, y in zip(mine, theirs, strict=True) if y > 0])
        return mid, lo, hi, True
    return c["time"] / b["time"] if b["time"] else nan, nan, nan, False


def _labels(ok: pd.DataFrame, metric: str | None, column: str) -> dict:
    if column not in ok.columns:
        return {}
    rows = ok if metric is None else ok[ok["metric"] == metric]
    rows = rows[rows[column].notna()].drop_duplicates("case_id")
    return dict(zip(rows["case_id"], rows[column], strict=True))


def _key(row, keys: list[str]) -> tuple:
    return tuple(str(row[k]) for k in keys)
