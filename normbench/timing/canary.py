"""A fixed, compute-bound, cache-resident kernel timed beside every CPU latency case: on a shared machine its
speed changes over seconds to minutes, and every case's time with it (docs/methodology.md, "Machine speed")."""

from __future__ import annotations

import gc
import statistics
import time

SHAPE = (512, 256)  # rows x d: 512 KiB in fp32, L2-resident on any current x86-64 core
SEED = 0
EPS = 1e-5
WARMUP_CALLS = 3
SAMPLES = 9
CALLS_PER_SAMPLE = 8
FIRST_READINGS = 3  # readings reference() takes at first use

_kernel: tuple | None = None  # (x, weight, bias): built once, kept alive (resident_bytes() counts them)
_fastest: dict[int, float] = {}  # thread count -> the fastest reading seen in this process
# torch is imported inside the functions: this module is torch-free at import (`--help` stays instant).


def _tensors() -> tuple:
    global _kernel
    if _kernel is None:
        import torch

        gen = torch.Generator().manual_seed(SEED)
        x = torch.randn(*SHAPE, generator=gen)
        weight = 1.0 + 0.1 * torch.randn(SHAPE[1], generator=gen)
        bias = 0.1 * torch.randn(SHAPE[1], generator=gen)
        _kernel = (x, weight, bias)
    return _kernel


def measure_canary() -> float:
    """Seconds per call of the canary kernel: the median of SAMPLES samples of CALLS_PER_SAMPLE calls, after
    WARMUP_CALLS untimed ones, with Python's garbage collector off (as the CPU timer does, timing/cpu.py)."""
    import torch
    import torch.nn.functional as F

    x, weight, bias = _tensors()
    per_call = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        with torch.inference_mode():
            for _ in range(WARMUP_CALLS):
                F.layer_norm(x, SHAPE[1:], weight, bias, EPS)
            for _ in range(SAMPLES):
                t0 = time.perf_counter_ns()
                for _ in range(CALLS_PER_SAMPLE):
                    F.layer_norm(x, SHAPE[1:], weight, bias, EPS)
                per_call.append((time.perf_counter_ns() - t0) * 1e-9 / CALLS_PER_SAMPLE)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(per_call)


def _threads() -> int:
    import torch

    return torch.get_num_threads()


def read() -> float:
    """One canary reading, recorded: reference() takes it into account from now on."""
    threads = _threads()
    value = measure_canary()
    _fastest[threads] = min(value, _fastest.get(threads, value))
    return value


def reference() -> float:
    """The fastest canary reading this process has seen at the current thread count; the first call takes
    FIRST_READINGS readings, so a process's first case already has a reference to be compared with."""
    threads = _threads()
    if threads not in _fastest:
        for _ in range(FIRST_READINGS):
            read()
    return _fastest[threads]


def resident_bytes() -> int:
    """Bytes the canary keeps alive between readings (its input and parameters); 0 before first use."""
    if _kernel is None:
        return 0
    return sum(t.numel() * t.element_size() for t in _kernel)
