"""Rows that say in what process state a latency case was timed (see timing/process.py for the policy)."""

from __future__ import annotations

import math

from normbench.benches._latency.accuracy import memo_bytes
from normbench.timing import canary
from normbench.timing.pages import LOW_SHARE, huge_share, process_huge_share, process_state, tensor_ranges
from normbench.timing.process import FAULT_SAMPLES_FLAG, keep_allocator_warm, tensor_bytes


def process_rows(measured: dict, extra_bytes: int) -> list[dict]:
    """Page faults per timed call and the samples that took any (norm and copy probe), the `faulted` flag
    (a quarter of either's samples or more faulted), the allocator policy in force
    and the bytes the harness kept resident beside the case's tensors while timing (timing/process.py)."""
    rows, faulted = [], False
    for name, prefix in (("norm", ""), ("copy", "copy_")):
        s = measured.get(name)
        if s is None or "timed_calls" not in s.extra:
            continue
        per_call = s.extra["minor_faults"] / max(1, s.extra["timed_calls"])
        share = s.extra.get("fault_samples", 0) / max(1, len(s.times))
        faulted = faulted or share >= FAULT_SAMPLES_FLAG
        rows += [
            {"metric": f"{prefix}faults_per_call", "unit": "faults", "value": per_call},
            {
                "metric": f"{prefix}fault_samples",
                "unit": "samples",
                "value": float(s.extra.get("fault_samples", 0)),
            },
        ]
    if rows:
        policy = keep_allocator_warm()
        rows += [
            {"metric": "faulted", "unit": "bool", "value": float(faulted)},
            {
                "metric": "allocator_warm",
                "unit": "bool",
                "value": float(policy["applied"]),
                "policy": policy["policy"],
            },
        ]
    rows.append({"metric": "resident_extra_bytes", "unit": "B", "value": float(extra_bytes)})
    return rows


def resident_extra_bytes(acc, copy_fn, timer, memo: dict, reset=None, placed=()) -> int:
    """Bytes of tensors the harness keeps alive while the case is timed, beside the case's own input,
    parameters and gradients: the implementation's outputs kept for the re-check after timing, the
    memoised float64 references, the copy probe's own tensors and the flush buffer (of the cold-cache
    timer, or `reset`, the one that set the cache state before a warm case), the extra placements
    (`placed`: their input copies and steps, _latency/placement.py) and the canary's tensor once a case of
    the process has used it (timing/canary.py). copy_fn may be a list (one per placement)."""
    kept = [acc[0].outputs] if acc is not None else []
    for fn in copy_fn if isinstance(copy_fn, list) else [copy_fn]:
        if fn is not None:
            kept.append(getattr(fn, "own_tensors", []))
    copies, steps = placed or ([], [])
    kept += [*copies, *(getattr(s, "own_tensors", []) for s in steps)]
    flush = getattr(timer, "between", None) or getattr(timer, "flush", None)  # CPU or CUDA cold cache
    for buffer in (flush, reset):
        if buffer is not None and hasattr(buffer, "buf"):
            kept.append(buffer.buf)  # tensor_bytes counts a storage once
    return tensor_bytes(*kept) + memo_bytes(memo) + canary.resident_bytes()


def page_rows(device: str, *tensors) -> list[dict]:
    """The share of the case's tensor bytes backed by huge pages (timing/pages.py), the same for the whole
    process's anonymous memory, labelled with the process's page state, and `huge_pages_low` where huge pages were asked for and under half the bytes got
    them. Nothing on a GPU; NaN where /proc/self/smaps cannot be read (not Linux)."""
    if device != "cpu":
        return []
    state = process_state()["pages"]
    share = huge_share(tensor_ranges(*tensors))
    value = math.nan if share is None else share
    low = state == "huge" and share is not None and share < LOW_SHARE
    whole = process_huge_share()
    return [
        {"metric": "huge_page_share", "unit": "share", "value": value, "pages": state},
        # all the process's anonymous memory: the free blocks a call's temporaries come from included
        {
            "metric": "process_huge_page_share",
            "unit": "share",
            "value": math.nan if whole is None else whole,
            "pages": state,
        },
        {"metric": "huge_pages_low", "unit": "bool", "value": float(low), "pages": state},
    ]


def machine_speed_reading(p: dict) -> float | None:
    """A canary reading (timing/canary.py) for a CPU case outside the fast preset, else None. The first
    reading of a process also takes the reference readings."""
    if p["device"] != "cpu" or p.get("preset") == "fast" or p.get("lean"):
        return None
    canary.reference()
    return canary.read()


def machine_speed_rows(before: float | None, after: float | None) -> list[dict]:
    """`canary_time`, the slower of the canary readings taken just before and just after the timed section,
    and `machine_slowdown`, that over the fastest reading of the process (>= 1): how much slower than its
    own best the machine ran while the case was timed. Nothing where no reading was taken."""
    if before is None or after is None:
        return []
    slower = max(before, after)
    return [
        {"metric": "canary_time", "unit": "s", "value": slower},
        {"metric": "machine_slowdown", "unit": "ratio", "value": slower / canary.reference()},
    ]
