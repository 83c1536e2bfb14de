"""A timing case (latency, block) timed in k processes (executors/processes.py): the share of the
rounds each process takes, and the case's rows over its processes. Per process: its raw samples and one
`<metric>_process` row per timed statistic (time, time_vs_ref, time_vs_copy), labelled with `process`. Over
processes: `<metric>_median` and the `_lo`/`_hi` interval from core/robust.py's over_processes. Why and what
the interval covers: docs/methodology.md, "Intervals over processes"."""

from __future__ import annotations

import math
from statistics import median

from normbench.core.robust import over_processes

# Statistics timed per process whose value over processes is the median of the per-process values with
# the studentized-median interval (the ratios) or without one (the time, whose seconds carry the machine's
# phases: its interval is the ratios')
INTERVALS = ("time_vs_ref", "time_vs_copy")
PER_PROCESS = ("time", *INTERVALS)
# Rows of the runner (runner.run_one) over processes: the whole work, its first start and last end, the
# highest load seen
COMBINE = {"case_wall_s": sum, "case_started_unix": min, "case_finished_unix": max, "loadavg_1m": max}
# Labels that differ between processes without saying what a row is: kept from the first process
PROCESS_LOCAL = ("round_set", "timer", "node", "ray_node", "process")


def process_share(params: dict, index: int, k: int) -> dict:
    """The case's parameters in process `index` of k: today's rounds split across processes (⌊samples / k⌋,
    at least 3 each) and its run floor too, so k processes time about as long as one did; the accuracy check, peak
    memory, page and machine-speed readings only in the first (`lean` in the others)."""
    p = dict(params)
    if k <= 1:
        return p
    p["samples"] = max(3, p["samples"] // k)
    if "min_run_s" in p:
        p["min_run_s"] = p["min_run_s"] / k
    if index > 0:
        p["lean"] = True
        for key, off in (("accuracy_rows", 0), ("memory", False)):
            if key in p:
                p[key] = off
    return p


def merge_processes(
    results: list[tuple[int, list[dict], str, str | None]],
) -> tuple[list[dict], str, str | None]:
    """(rows, status, error) of a case from its per-process (index, rows, status, error): every process
    ok gives the rows over processes; else the first process's outcome that is not ok, named."""
    k = len(results)
    for index, rows, status, error in results:
        if status != "ok":
            meta = [r for r in rows if r["metric"] in COMBINE]
            return meta, status, f"process {index + 1} of {k}: {error}" if status == "failed" else error
    return over_process_rows(results), "ok", None


def over_process_rows(results) -> list[dict]:
    first = results[0][1]
    canonical = {key: first[0][key] for key in ("round_set",) if first and key in first[0]}
    out: list[dict] = []
    scalars: dict[tuple, list[dict]] = {}
    per_process: dict[tuple, list[dict]] = {}
    for index, rows, _, _ in results:
        for row in rows:
            row = {**row, **canonical, "process": index}
            metric = row["metric"]
            if row.get("sample") is not None:
                out.append(row)  # raw samples, kept with their process
                continue
            base = metric.removesuffix("_median")
            if base in PER_PROCESS and metric.endswith("_median"):
                out.append({**row, "metric": f"{base}_process"})
                per_process.setdefault(_key({**row, "metric": base}), []).append(row)
                continue
            if metric[-3:] in ("_lo", "_hi") and metric[:-3] in INTERVALS:
                continue  # one process's own interval over its rounds: replaced by the one over processes
            scalars.setdefault(_key(row), []).append(row)
    for (base, _), rows in per_process.items():
        est = over_processes([r["value"] for r in rows])
        stats = [("median", est.estimate)] + ([("lo", est.lo), ("hi", est.hi)] if base in INTERVALS else [])
        out += [{**rows[0], "metric": f"{base}_{name}", "value": v, "process": None} for name, v in stats]
    for (metric, _), rows in scalars.items():
        values = [r["value"] for r in rows]
        out.append({**rows[0], "process": None, "value": _combine(metric, rows[0].get("unit"), values)})
    out.append({"metric": "processes", "unit": "processes", "value": float(len(results)), **canonical})
    return out


def _key(row: dict) -> tuple:
    labels = tuple(
        sorted(
            (k, v) for k, v in row.items() if k not in ("metric", "unit", "value", "sample", *PROCESS_LOCAL)
        )
    )
    return row["metric"], labels


def _combine(metric: str, unit, values: list[float]) -> float:
    finite = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if metric in COMBINE:
        return float(COMBINE[metric](finite)) if finite else math.nan
    if not finite:
        return math.nan
    if metric.endswith("_min"):
        return float(min(finite))
    return float(median(finite))
