"""One metric of one run side, grouped the way `compare` matches cases: by norm, impl and parameters (without
the pooled ones, the seeds), in whole-frame operations. One stable sort of the metric's rows by group and
value order, then each group is a slice of plain arrays: nothing per case touches the whole frame (the
per-case filtering this replaces made a 3,000-case comparison quadratic)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

# Rows that produced a result: ok, and outcomes such as stuck or not_converged (not failed/skipped).
NO_RESULT = ["failed", "skipped", "unavailable"]
# The order in which one group's values pair up with the other side's (case, sample, step, layer, ...).
ORDER_COLUMNS = ("case_id", "process", "sample", "step", "layer", "site", "tensor", "scale")


@dataclass
class MetricGroup:
    """What compare needs of one matched group on one side."""

    values: list[float]  # raw samples when the group has them, else one value per row, in ORDER_COLUMNS order
    case_ids: frozenset[str]
    params: str  # the params JSON of the group's first row (in frame order): its tolerance reads it
    unit: str
    run_values: dict[str, list[float]]  # the values above by run id (one median per run: noise.py)
    pairs: list[tuple[str, str]]  # (run_id, case_id) in row order, each once: the load check reads them
    pooled: bool  # one value per case over several cases (seeds): a sample of a distribution
    round_set: str | None = None  # the one latency round set its rows were timed in (round_sets.py)
    per_process: bool = False  # values are one per fresh process (`<metric>_process`), not per round


def group_key(norm, impl, params_json: str, pool) -> str:
    params = {k: v for k, v in json.loads(params_json).items() if k not in pool}
    return json.dumps([norm, impl, params], sort_keys=True, default=str)


def metric_groups(frame: pd.DataFrame, metric: str, pool: tuple[str, ...]) -> dict[str, MetricGroup]:
    """{group key: MetricGroup} of `metric` in `frame` (one bench kind's rows of one side)."""
    sel = frame[(frame["metric"] == metric) & ~frame["status"].isin(NO_RESULT)]
    if "process" in frame:  # a case timed in k processes: its test's unit is the process, not the round
        own = frame[(frame["metric"] == f"{metric}_process") & ~frame["status"].isin(NO_RESULT)]
        if not own.empty:
            sel = pd.concat([sel[~sel["case_id"].isin(set(own["case_id"]))], own]).sort_index(kind="stable")
    if sel.empty:
        return {}
    # the key of each distinct (norm, impl, params): json work once per case, not once per row
    triples = sel.groupby(["norm", "impl", "params"], dropna=False, sort=False).ngroup().to_numpy()
    first_of = ~pd.Series(triples).duplicated().to_numpy()
    reps = sel.iloc[np.flatnonzero(first_of)]
    by_triple = {
        t: group_key(n, i, p, pool)
        for t, n, i, p in zip(triples[first_of], reps["norm"], reps["impl"], reps["params"], strict=True)
    }
    order = [c for c in ORDER_COLUMNS if c in sel]
    labels = ["round_set"] if "round_set" in sel else []
    rows = sel[
        [
            "value",
            "sample",
            "case_id",
            "run_id",
            "unit",
            "params",
            "metric",
            *labels,
            *set(order) - {"case_id", "sample"},
        ]
    ]
    rows = rows.assign(_key=[by_triple[t] for t in triples], _pos=np.arange(len(sel)))
    rows = rows.sort_values(["_key", *order], na_position="first", kind="stable")  # lexsort: stable
    keys = rows["_key"].to_numpy()
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    ends = np.r_[starts[1:], len(keys)]
    values = rows["value"].to_numpy(dtype=float, na_value=np.nan)
    raw = rows["sample"].notna().to_numpy()
    processes = rows["metric"].to_numpy() != metric  # `<metric>_process` rows
    cases, runs = rows["case_id"].to_numpy(), rows["run_id"].to_numpy()
    units, params, pos = rows["unit"].to_numpy(), rows["params"].to_numpy(), rows["_pos"].to_numpy()
    sets = rows["round_set"].to_numpy() if labels else None
    out = {}
    for start, end in zip(starts, ends, strict=True):
        part = slice(start, end)
        chosen = raw[part] if raw[part].any() else np.ones(end - start, dtype=bool)
        vals, run_ids = values[part][chosen], runs[part][chosen]
        by_run: dict[str, list[float]] = {}
        for run_id, v in zip(run_ids, vals, strict=True):
            by_run.setdefault(run_id, []).append(float(v))
        first = start + int(np.argmin(pos[part]))
        in_frame_order = np.argsort(pos[part], kind="stable")
        pairs = list(dict.fromkeys(zip(runs[part][in_frame_order], cases[part][in_frame_order], strict=True)))
        case_ids = frozenset(cases[part])
        out[keys[start]] = MetricGroup(
            values=[float(v) for v in vals],
            case_ids=case_ids,
            params=params[first],
            unit=str(units[first] or ""),
            run_values={r: by_run[r] for r in sorted(by_run)},
            pairs=pairs,
            pooled=bool(pool) and not raw[part].any() and len(case_ids) == end - start > 1,
            round_set=_one_label(sets[part]) if sets is not None else None,
            per_process=bool(processes[part].all()),
        )
    return out


def _one_label(labels: np.ndarray) -> str | None:
    """The one label of a group's rows, else None (none, or several: a group over several runs)."""
    distinct = {str(v) for v in labels if isinstance(v, str)}
    return distinct.pop() if len(distinct) == 1 else None


def data_hashes(frame: pd.DataFrame) -> dict[str, frozenset]:
    """{case_id: the SHA-256s of the text it trained on} (empty for benches without data)."""
    if "data_sha256" not in frame:
        return {}
    rows = frame[frame["data_sha256"].notna()]
    return {c: frozenset(h) for c, h in rows.groupby("case_id")["data_sha256"].unique().items()}
