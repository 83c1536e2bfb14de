"""One case timed base against head in one process: impl@head, impl@base and a second, separate build of
impl@head (the A/A) in the same paired rounds, by the bench's own harness (Bench.time_sides). What one
process yields per case: three statistics of head over base, and the same three of head' over head.

    paired   the median of the per-round ratios (the latency bench's time_vs_ref construction)
    min      the ratio of the two sides' fastest samples (noise on a shared machine only adds time)
    p20      the ratio of their 20th percentiles (a low percentile, less at the mercy of one lucky sample)
"""

from __future__ import annotations

import math
from statistics import median

from normbench.benches import get_bench
from normbench.core.case import Case
from normbench.norms import get_norm
from normbench.timing.paired import paired_ratios

STATS = ("paired", "min", "p20")


def _quantile(values: list[float], q: float) -> float:
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def statistics(a, b) -> dict[str, float]:
    """a's time over b's by each of STATS (a, b: Samples from the same measure_interleaved call)."""
    return {
        "paired": median(paired_ratios(a, b)),
        "min": min(a.times) / min(b.times),
        "p20": _quantile(a.times, 0.2) / _quantile(b.times, 0.2),
    }


def time_case(case: dict, base_norms, seed: int) -> dict:
    """{"ab": head over base, "aa": head' over head (each by STATS), "head_min_s", "base_min_s"} for one
    case (a dict of case_id, kind, norm, impl, params)."""
    c = Case(case["kind"], case["norm"], case["impl"], case["params"], 0, case["case_id"])
    m = get_bench(c.kind).time_sides(c, {"head": get_norm, "base": base_norms, "head2": get_norm}, seed)
    return {
        "ab": statistics(m["head"], m["base"]),
        "aa": statistics(m["head2"], m["head"]),
        "head_min_s": min(m["head"].times),
        "base_min_s": min(m["base"].times),
    }


def unavailable_everywhere(case: dict, base_norms) -> bool:
    """True when the case's implementation is unavailable (a missing optional kernel) on both sides."""
    if not case.get("norm"):
        return False
    try:
        sides = (get_norm(case["norm"]), base_norms(case["norm"]))
        return all(s.impls[case["impl"]].missing_requirement() is not None for s in sides)
    except (KeyError, ValueError):
        return False
