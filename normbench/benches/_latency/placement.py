"""Placements (opt-in, `placements = k`): a CPU latency case spreads its samples over k copies of its
tensors, because on a virtual machine where a tensor lands in memory can set its speed for as long as it
lives. The default is one copy: on this project's machine the copies did not make runs agree better.

Why it exists (2-core AMD EPYC Firecracker VM, torch 2.13.0+cpu, 1 thread, idle; repeatable
with scripts/process_state.py): six LayerNorm 4096x1024 inputs allocated in one process read 1160-1340
us, and each kept its own level when revisited three times in turn (within 2%), so the level belonged to
the tensor, not to the moment. A case that times one input reports one draw of that; timing the samples
on k copies (the same values at other addresses, each with its own step tensors) makes its median a
median over k draws. A prototype (12 processes each, LayerNorm 4096x1024 fwd) cut the run-to-run CV from
4.8% to 2.1% (a second batch 4.5% -> 1.8%). In the bench itself, later and on a busier host, it did not:
fresh processes alternating placements = 1 and 5 gave CV 22.3% vs 28.9% (10 pairs), 7.8% vs 7.8% (6),
10.9% vs 35.7% (10), and with five copies some processes read 2x slower (placement_spread ~2): more
memory, more chances of a slow draw. Hence opt-in: it answers "does placement move this case here?"
through `placement_spread`, and users who find it large can average over copies.

Rounds take the copies in turn (round r times copy r mod k; timing.measure_interleaved): with 30 samples
and k = 5, 6 samples on each copy. `placement_spread` stores max/min of the per-copy medians; the copies
are timed in different rounds, so it also holds whatever changed between rounds (compare the case's IQR).
k is 1 on CUDA and in graph mode (device memory is not paged by a hypervisor, and no evidence there;
a GPU not yet measured), and the copies beyond the first are capped by PLACEMENT_BUDGET_BYTES of extra memory (then
fewer copies; `placements` records k).
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
