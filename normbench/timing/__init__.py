"""Timers. Each returns raw per-call samples (seconds); statistics are computed from them later.

    cpu.CpuTimer   time.perf_counter_ns around a calibrated inner loop
    cuda           CUDA events per sample, L2 flush between samples (timing/cuda.py)
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Samples:
    """Raw samples of one timed callable. times[i] is the mean time of one call within sample i
    (sample i ran `inner` calls back to back)."""

    times: list[float]
    inner: int
    timer: str
    warmup: int
    extra: dict = field(default_factory=dict)


def timer_for(device: str, **options):
    """The timer for a device: the seam where the CUDA timer plugs in."""
    if device == "cpu":
        from normbench.timing.cpu import CpuTimer

        return CpuTimer(**options)
    if device == "cuda":
        from normbench.timing.cuda import CudaTimer

        return CudaTimer(**options)
    raise ValueError(f"no timer for device {device!r}")
