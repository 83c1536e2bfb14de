"""Peak memory of one call, above what was resident before it: CUDA's peak-memory counters, or on the CPU
torch's allocator events from the autograd profiler in its legacy (Kineto-free) mode, a lower bound.
Why that mode, and what it cannot see: docs/methodology.md, "Peak memory".
"""

from __future__ import annotations

import contextlib
import os


def peak_memory_row(step, device: str, grad_context) -> dict:
    """The `peak_mem` row of a case (bytes, with the method as a label)."""
    peak, method = peak_call_bytes(step, device, grad_context)
    return {"metric": "peak_mem", "unit": "B", "value": peak, "method": method}


def peak_call_bytes(step, device: str, grad_context) -> tuple[float, str]:
    """(bytes, method) of one call of step() under grad_context()."""
    if hasattr(step, "clear_grads"):
        step.clear_grads()
    if device == "cuda":
        return _cuda_peak(step, grad_context), "cuda max_memory_allocated"
    return _cpu_peak(step, grad_context), "autograd profiler allocator events"


def _cuda_peak(step, grad_context) -> float:
    import torch

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    with grad_context():
        step()
    torch.cuda.synchronize()
    return float(torch.cuda.max_memory_allocated() - before)


def _cpu_peak(step, grad_context) -> float:
    from torch.autograd.profiler import profile

    with _quiet_stderr(), profile(use_kineto=False, profile_memory=True) as prof:
        with grad_context():
            step()
    events = [e for e in prof.kineto_results.events() if e.name() == "[memory]"]
    live = peak = 0
    for e in sorted(events, key=lambda e: e.start_ns()):
        live += e.nbytes()
        peak = max(peak, live)
    return float(peak)


@contextlib.contextmanager
def _quiet_stderr():
    """Kineto prints a line to the process's stderr at every profiler start and stop (not through Python,
    so only a file-descriptor redirect silences it); progress output would drown in them."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
