"""Placements (opt-in, `placements = k`): a CPU latency case spreads its samples over k copies of its
tensors, because on a virtual machine where a tensor lands in memory can set its speed for as long as it
lives. The default is one copy: on this project's machine the copies did not make runs agree better.
Round r times copy r mod k; `placement_spread` = max/min of the per-copy medians. The evidence and the
caps: docs/methodology.md, "Placement (opt-in)".
"""

from __future__ import annotations

from normbench.timing.process import tensor_bytes

DEFAULT_PLACEMENTS = 1
PLACEMENT_BUDGET_BYTES = 256 * 2**20  # extra copies kept resident while a case is timed, at most


def placement_count(p: dict, x, step) -> int:
    """How many copies (k >= 1) this case times: the `placements` parameter, at most one per sample, 1
    on CUDA or in graph mode, and fewer where the copies would exceed PLACEMENT_BUDGET_BYTES."""
    if p["device"] != "cpu" or p["cuda_graph"]:
        return 1
    per_copy = tensor_bytes(x, *getattr(step, "own_tensors", [])) * (2 if p["copy_probe"] else 1)
    affordable = 1 + PLACEMENT_BUDGET_BYTES // max(1, per_copy)
    return max(1, min(p["placements"], p["samples"], affordable))


def rounds_for(p: dict, k: int) -> int:
    """Rounds of measure_interleaved: one sample of every member of the round set per round
    (_latency/round_set.py), so each round gives one paired ratio, and round r times copy r mod k. Graph
    mode captures new graphs each round: one round there (its ratios are then ratios of medians)."""
    if p["cuda_graph"]:
        return 1
    return max(k, p["samples"])


def per_copy_medians(samples, k: int) -> list[float]:
    """The median of each copy's samples, from the rounds' sizes (round r timed copy r mod k)."""
    from statistics import median

    groups: list[list[float]] = [[] for _ in range(k)]
    start = 0
    for r, size in enumerate(samples.extra.get("round_sizes", [len(samples.times)])):
        groups[r % k].extend(samples.times[start : start + size])
        start += size
    return [median(g) for g in groups if g]


def placement_rows(samples, k: int) -> list[dict]:
    """`placements` (k) and, where k > 1, `placement_spread`: max/min of the per-copy medians."""
    rows = [{"metric": "placements", "unit": "copies", "value": float(k)}]
    if k > 1:
        medians = per_copy_medians(samples, k)
        rows.append({"metric": "placement_spread", "unit": "ratio", "value": max(medians) / min(medians)})
    return rows
