"""Process state that moves CPU timings: the C allocator's policy (no mmap, no trim, so warm-up faults in every
page once), the cache state before a warm case, and the page faults counted per case.
docs/methodology.md ("Measuring honestly") has the measurements behind each choice."""

from __future__ import annotations

import os
import sys

from normbench.timing.cache import flush_buffer

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
    done (a GPU, or a cold case, whose timer flushes before every sample anyway). Why: docs/methodology.md, "Measuring honestly"."""
    if device != "cpu" or cache != "warm":
        return None

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


def storages(*objects) -> list[tuple[int, int, str]]:
    """(address, nbytes, device type) of each storage among the tensors in objects (tensors, or nested
    dicts/lists/tuples of them), each storage once."""
    seen, out = set(), []
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
                out.append((storage.data_ptr(), storage.nbytes(), obj.device.type))
    return out


def tensor_bytes(*objects) -> int:
    """Bytes held by the tensors in objects (tensors, or dicts/lists/tuples of them), each storage once."""
    return sum(nbytes for _, nbytes, _ in storages(*objects))
