"""CPU timer: warm up, calibrate an inner loop so one sample lasts at least `min_sample_s` (well above
the clock's resolution and the loop's own overhead), then take `samples` samples and keep them all.

Cold-cache mode (timer_for(..., cache="cold")) passes a flush as `between` and fixes inner = 1: with an
inner loop only the first call of each sample would find a cold cache."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from normbench.timing import Samples


class CpuTimer:
    name = "cpu-perf_counter"

    def __init__(
        self,
        *,
        warmup: int = 3,
        samples: int = 20,
        min_sample_s: float = 2e-3,
        between: Callable[[], None] | None = None,
        inner: int | None = None,
    ):
        """between: called before each sample, outside the timed region (a cache flush, say).
        inner: calls per sample; None = calibrate to min_sample_s."""
        self.warmup = warmup
        self.samples = samples
        self.min_sample_s = min_sample_s
        self.between = between
        self.inner = inner

    def calibrate(self, fn: Callable[[], object]) -> int:
        """Smallest power-of-two-ish inner count whose loop takes >= min_sample_s."""
        inner = 1
        while True:
            elapsed = self._run(fn, inner)
            if elapsed >= self.min_sample_s or inner >= 1 << 20:
                return inner
            # jump close to the target, but never more than 100x in one step (the first call may be slow)
            factor = self.min_sample_s / max(elapsed, 1e-9)
            inner = min(1 << 20, max(inner * 2, min(inner * 100, math.ceil(inner * factor * 1.2))))

    @staticmethod
    def _run(fn: Callable[[], object], inner: int) -> float:
        t0 = time.perf_counter_ns()
        for _ in range(inner):
            fn()
        return (time.perf_counter_ns() - t0) * 1e-9

    def measure(self, fn: Callable[[], object]) -> Samples:
        for _ in range(self.warmup):
            fn()
        inner = self.inner or self.calibrate(fn)
        times = []
        for _ in range(self.samples):
            if self.between is not None:
                self.between()
            times.append(self._run(fn, inner) / inner)
        return Samples(times, inner, self.name, self.warmup)
