"""Process state that moves CPU timings: the C allocator's policy and the page faults it causes.

Why: glibc's malloc serves a block above M_MMAP_THRESHOLD (128 KiB at start, then raised to the size of
the largest mmap'd block freed so far, at most 32 MiB) with a fresh mmap, and returns free memory at the
top of the heap to the kernel once it exceeds M_TRIM_THRESHOLD (twice the mmap threshold). So a norm
whose temporaries are megabytes gets fresh, unmapped pages on every call: the kernel zero-fills each 4 KiB
page on first touch, thousands of minor page faults per call. Whether that happens depends on what the
process allocated and freed earlier (one 32 MiB float64 buffer raises the thresholds for good), so the
same case read 5x slower in a fresh process than after another case (2-core EPYC VM: nn.RMSNorm 4096x1024
fp32, 19.9 ms and ~8,400 faults per call fresh, 3.8 ms and ~60 faults after a large allocation).

Policy (`keep_allocator_warm`, applied once per process before the first timed sample): no mmap for
malloc (M_MMAP_MAX = 0) and no trimming (M_TRIM_THRESHOLD = 2 GiB - 1), so freed memory stays mapped in
the process and the warm-up calls fault in every page a call needs; the timed calls then take none,
whatever ran before. The cost is a resident set that stays at its high-water mark, which a benchmark
process can afford. NORMBENCH_ALLOCATOR=default leaves malloc as it is (to see the effect), and on a
C library without mallopt (musl, macOS) the policy is reported as not applied. Either way every case
records the minor page faults its timed calls took, and the report flags a case whose calls faulted.

Cache state (`reset_cache_state`): before a warm-cache CPU case is timed (after its accuracy check), the
last-level cache is rewritten once by the process's flush buffer (timing/cache.py: 2x the LLC, random
bits, read and written), so every case starts its warm-up from the same cache contents, whatever the
previous case or the float64 check left there (dirty lines included, whose write-backs would otherwise fall
in this case's first calls); the warm-up then loads the case's own working set. It costs one pass over 2x
the LLC per case (64 MiB on the 32 MiB-L3 EPYC) and the buffer stays resident (counted in
`resident_extra_bytes`); `cache_reset` = 1 says it was done. Cold cases flush before every sample anyway.

What else was examined (scripts/process_state.py repeats the experiments, each in one process,
A and B alternating): transparent huge pages do not enter: this machine's THP mode is `madvise`, torch
madvises only under THP_MEM_ALLOC_ENABLE=1 and glibc's heap never does, so AnonHugePages stayed 0; the
input's alignment (offset mod 4096) did not move LayerNorm 2048x512 (8 placements x 3 rounds within
332-338 µs, quiet machine), and the slow inputs of unfused RMSNorm 2048x512 were different ones in every
round (520-910 µs), so it is not placement either; OpenMP state is fixed by the run's thread count set once
per process. What remains is a time-varying disturbance of ops with large temporaries (unfused RMSNorm,
a chain of out-of-place multiplies): their slow samples coincide with each other (correlation 0.5-0.7
between them, about 0 with LayerNorm) on a VM whose 32 MiB L3 and memory bandwidth are shared beyond the
process, so no in-process policy removes it; the floor on each case's timed window (timing/cpu.py,
min_run_s) is what keeps a median from resting on one disturbed stretch. Later, at 4096x1024 (16 MiB per
tensor), a tensor's placement did matter: each input kept its own level for as long as it lived (1160-1340
us across six inputs); averaging over copies is the opt-in `placements` (benches/_latency/placement.py,
with why it is not the default).
"""

from __future__ import annotations

import os
import sys

M_TRIM_THRESHOLD = -1  # mallopt parameter numbers from glibc's malloc.h
M_MMAP_MAX = -4
TRIM_THRESHOLD = 2**31 - 1  # mallopt takes an int: the largest value
# A case is flagged `faulted` when at least this share of its timed samples took page faults: then the
# faults are systematic (the allocator maps fresh memory per call) and can move the median; one stray
# event (glibc re-laying its heap once) shows in faults_per_call but leaves most samples clean.
FAULT_SAMPLES_FLAG = 0.25

_policy: dict | None = None


def keep_allocator_warm() -> dict:
    """Apply the allocator policy once per process; return what was done: {"applied": bool, "policy": str}."""
    global _policy
    if _policy is None:
        _policy = _apply_policy()
    return _policy


def _apply_policy() -> dict:
    if os.environ.get("NORMBENCH_ALLOCATOR", "").strip().lower() == "default":
        return {"applied": False, "policy": "default malloc (NORMBENCH_ALLOCATOR=default)"}
    if not sys.platform.startswith("linux"):
        return {"applied": False, "policy": f"default malloc (no mallopt policy on {sys.platform})"}
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError) as exc:
        return {"applied": False, "policy": f"default malloc (mallopt unavailable: {exc})"}
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    if mallopt(M_MMAP_MAX, 0) != 1 or mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) != 1:
        return {"applied": False, "policy": "default malloc (mallopt refused the settings)"}
    return {"applied": True, "policy": "glibc mallopt: M_MMAP_MAX=0, M_TRIM_THRESHOLD=2GiB"}


def reset_cache_state(device: str, cache: str):
    """Before a warm-cache CPU case is timed, rewrite the last-level cache with the process's flush buffer
    (timing/cache.py, twice the LLC, the same buffer cold mode uses) and return it; None where nothing was
    done (a GPU, or a cold case, whose timer flushes before every sample anyway). Why: see "Cache state" in this module's docstring."""
    if device != "cpu" or cache != "warm":
        return None
    from normbench.timing.cache import flush_buffer

    flush = flush_buffer("cpu")
    flush()
    return flush


def minor_faults() -> int:
    """Minor page faults of this process so far (0 where getrusage is unavailable)."""
    try:
        import resource
    except ImportError:  # Windows
        return 0
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_minflt)


def tensor_bytes(*objects) -> int:
    """Bytes held by the tensors in objects (tensors, or dicts/lists/tuples of them), each storage once."""
    seen, total = set(), 0
    stack = list(objects)
    while stack:
        obj = stack.pop()
        if isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, list | tuple):
            stack.extend(obj)
        elif hasattr(obj, "untyped_storage"):
            storage = obj.untyped_storage()
            if storage.data_ptr() not in seen:
                seen.add(storage.data_ptr())
                total += storage.nbytes()
    return total
