"""One case timed base against head in one process: impl@head, impl@base and a second, separate build of
impl@head (the A/A) in the same paired rounds, by the bench's own harness (Bench.time_sides). What one
process yields per case: the median of the per-round ratios head/base (the latency bench's time_vs_ref
construction), the same of head'/head, and each side's fastest sample."""

from __future__ import annotations

from statistics import median

from normbench.benches import get_bench
from normbench.core.case import Case
from normbench.norms import get_norm
from normbench.timing.paired import paired_ratios


def time_case(case: dict, base_norms, seed: int) -> dict:
    """{"ab": head over base, "aa": head' over head, "head_min_s", "base_min_s"} for one case (a dict of
    case_id, kind, norm, impl, params)."""
    c = Case(case["kind"], case["norm"], case["impl"], case["params"], 0, case["case_id"])
    m = get_bench(c.kind).time_sides(c, {"head": get_norm, "base": base_norms, "head2": get_norm}, seed)
    return {
        "ab": median(paired_ratios(m["head"], m["base"])),
        "aa": median(paired_ratios(m["head2"], m["head"])),
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
