"""Raw timing samples into result rows, shared by the timing benches (latency, block): one row per sample
and the summary statistics, and the statistic (median or min) that derived figures use."""

from __future__ import annotations

import math
from statistics import median

from normbench.timing import timer_for
from normbench.timing.paired import median_interval


def sample_stat(times, stat: str) -> float:
    """The median or the minimum of raw samples (see STATS in benches/latency.py)."""
    return median(times) if stat == "median" else min(times)


def timing_rows(prefix: str, samples) -> list[dict]:
    """Raw samples (one row each, with its index) and their summary statistics."""
    from normbench.core.stats import summarize  # numpy: not on the validation path

    rows = [{"metric": prefix, "unit": "s", "value": t, "sample": i} for i, t in enumerate(samples.times)]
    stats = summarize(samples.times)
    rows += [
        {"metric": f"{prefix}_{k}", "unit": "s", "value": stats[k]}
        for k in ("median", "p20", "p80", "iqr", "min")
    ]
    return rows


def ratio_rows(prefix: str, ratios: list[float], **labels) -> list[dict]:
    """Paired per-round ratios (timing/paired.py) as rows: one raw row per round (its index in `sample`),
    then `<prefix>_median` and its 95% interval `<prefix>_lo` / `<prefix>_hi` (order statistics; stored
    null below 6 rounds, where there is no interval: NaN in a stored value means a measurement came out NaN).
    `labels` go on every row (the reference a ratio is taken against)."""
    rows = [{"metric": prefix, "unit": "ratio", "value": r, "sample": i} for i, r in enumerate(ratios)]
    mid, lo, hi = median_interval(ratios)
    rows += [
        {"metric": f"{prefix}_median", "unit": "ratio", "value": mid},
        {"metric": f"{prefix}_lo", "unit": "ratio", "value": _bound(lo)},
        {"metric": f"{prefix}_hi", "unit": "ratio", "value": _bound(hi)},
    ]
    for row in rows:
        row.update(labels)
    return rows


def _bound(value: float) -> float | None:
    return value if math.isfinite(value) else None


def case_timer(p: dict):
    """The timer of a timing case's parameters (device, cache, graph mode, untimed calls, samples, sample
    length and, for latency, the run floor): what every timing bench and `normbench ab` time with."""
    return timer_for(
        p["device"],
        cache=p["cache"],
        graph=p.get("cuda_graph", False),
        warmup=p["warmup_calls"],
        samples=p["samples"],
        min_sample_s=p["min_sample_s"],
        **({"min_run_s": p["min_run_s"]} if "min_run_s" in p else {}),
    )
