"""Raw timing samples into result rows, shared by the timing benches (latency, block): one row per sample
and the summary statistics, and the statistic (median or min) that derived figures use."""

from __future__ import annotations

from statistics import median


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
