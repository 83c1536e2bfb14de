"""Peak memory of one call, above what was resident before it (inputs, parameters, the module): what the
call itself allocates at its high point (output, saved statistics, gradients, workspaces).

CUDA: torch.cuda.max_memory_allocated() after reset_peak_memory_stats(), minus memory_allocated() before.
CPU: the autograd profiler with profile_memory=True records every allocation and free of torch's CPU
allocator; their running sum over the call gives its peak. It runs in its legacy mode (use_kineto=False):
the same allocator events, but no Kineto activity profiler, whose first start cost 1.0-3.0 s per process on
the 2-core EPYC VM (docs/methodology.md), a third of a small suite's wall time, and which a peak of host memory does not
need. Both modes gave the same peaks (LayerNorm, RMSNorm, BatchNorm 512x256, fwd and fwd+bwd, after a first
call; tests/test_latency_bench.py checks the figure against a closed form). Memory that libraries allocate outside torch's allocator
(oneDNN scratchpads, OpenMP stacks) is not seen, and tracemalloc sees none of torch's memory at all, so
the CPU figure is a lower bound on the process's peak: stated so in docs/methodology.md.
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
