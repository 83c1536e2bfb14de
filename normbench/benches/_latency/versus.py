"""The report's ratio of one implementation's time to another's at the same parameters, paired wherever
the run allows: the stored `time_vs_ref` when the other is the case's reference; the per-round ratio of
the two cases' raw samples when one round set timed both (same `round_set` label; over processes, the
median of each process's and the interval over processes); else, unpaired, the
ratio of their times (no interval: two timings taken apart in time share none of the machine's phases)."""

from __future__ import annotations

import math
from statistics import median

import pandas as pd

from normbench.core.robust import over_processes
from normbench.timing.paired import median_interval

COLUMNS = ["vs_ratio", "vs_lo", "vs_hi", "vs_paired"]


def versus(ok: pd.DataFrame, cases: pd.DataFrame, other: str, keys: list[str]) -> pd.DataFrame:
    """For each row of `cases` (one per case: case_id, keys, `label` = norm:impl, `time`): its time over
    `other`'s at the same keys (`vs_ratio`), the 95% interval (`vs_lo`, `vs_hi`; NaN when unpaired) and
    whether the ratio is paired. Indexed like `cases`."""
    refs = _labels(ok, "time_vs_ref_median", "reference")
    sets = _labels(ok, None, "round_set")
    raw = ok[(ok["metric"] == "time") & ok["sample"].notna()].sort_values("sample")
    process = raw["process"].fillna(-1) if "process" in raw else pd.Series(-1, index=raw.index)
    samples: dict = {}  # case id -> process (-1: a run in one process) -> its rounds' samples
    # the values alone are grouped: a group of the wide frame would copy every column of its rows
    for (cid, i), values in raw["value"].groupby([raw["case_id"], process]):
        samples.setdefault(cid, {})[int(i)] = values.tolist()
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
    mine, theirs = samples.get(c["case_id"], {}), samples.get(b["case_id"], {})
    same_set = sets.get(c["case_id"]) is not None and sets.get(c["case_id"]) == sets.get(b["case_id"])
    paired = same_set and mine and mine.keys() == theirs.keys()
    if paired and all(len(mine[i]) == len(theirs[i]) for i in mine):
        per = {i: [x / y for x, y in zip(mine[i], theirs[i], strict=True) if y > 0] for i in mine}
        if list(per) == [-1]:  # one process: the interval over its rounds (timing/paired.py)
            mid, lo, hi = median_interval(per[-1])
            return mid, lo, hi, True
        est = over_processes([median(r) for r in per.values() if r])  # over processes (core/robust.py)
        return est.estimate, est.lo, est.hi, True
    return c["time"] / b["time"] if b["time"] else nan, nan, nan, False


def _labels(ok: pd.DataFrame, metric: str | None, column: str) -> dict:
    if column not in ok.columns:
        return {}
    rows = ok if metric is None else ok[ok["metric"] == metric]
    rows = rows[rows[column].notna()].drop_duplicates("case_id")
    return dict(zip(rows["case_id"], rows[column], strict=True))


def _key(row, keys: list[str]) -> tuple:
    return tuple(str(row[k]) for k in keys)
