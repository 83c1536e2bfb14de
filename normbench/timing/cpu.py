"""CPU timer: warm up, calibrate an inner loop so one sample lasts at least `min_sample_s` (well above
the clock's resolution and the loop's own overhead) and all samples together at least `min_run_s`, then take
`samples` samples and keep them all.

Why a floor on the whole run: the median of 15 samples moves only when 8 of them are disturbed, so what it
withstands is the time the samples span; the measurements behind DEFAULT_MIN_RUN_S (0.05 s) are in
docs/methodology.md, "Measuring honestly".
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable

from normbench.timing.process import keep_allocator_warm, minor_faults
from normbench.timing.samples import Samples

DEFAULT_MIN_RUN_S = 0.05


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
        min_run_s: float = 0.0,
    ):
        """between: called before each sample, outside the timed region (a cache flush, say).
        inner: calls per sample; None = calibrate to min_sample_s per sample and min_run_s in all.
        planned_samples: the samples the floor min_run_s is spread over (measure_interleaved sets it to
        the total when a round takes only a share)."""
        self.warmup = warmup
        self.samples = samples
        self.planned_samples = samples
        self.min_sample_s = min_sample_s
        self.min_run_s = min_run_s
        self.between = between
        self.inner = inner
        self.quiet_calls = 2  # consecutive fault-free calls `settle` waits for ...
        self.settle_max = 10  # ... making at most this many calls

    def settle(self, fn: Callable[[], object], quiet: int = 0) -> int:
        """Call fn until `self.quiet_calls` calls in a row take no minor page fault (at most settle_max);
        `quiet`: fault-free calls in a row just made (the warm-up's last ones), which count.
        The first calls after other work find the heap laid out differently and map fresh pages; glibc
        (before 2.38) can also take a few alloc/free cycles of an aligned block before it reuses one
        (fault, none, fault, fault, none, none, ...), hence two quiet calls in a row by default. The timed
        calls should map nothing. Without the allocator policy a large temporary faults on every call and
        waiting cannot help: then nothing is done, and the timed samples record the faults. Returns the
        calls made."""
        if not keep_allocator_warm()["applied"] or quiet >= self.quiet_calls:
            return 0
        for calls in range(1, self.settle_max + 1):
            before = minor_faults()
            fn()
            quiet = quiet + 1 if minor_faults() == before else 0
            if quiet >= self.quiet_calls:
                return calls
        return self.settle_max

    def sample_target_s(self) -> float:
        """How long one sample must last: min_sample_s, or longer where the planned samples would
        together span less than min_run_s."""
        return max(self.min_sample_s, self.min_run_s / max(1, self.planned_samples))

    def calibrate(self, fn: Callable[[], object]) -> int:
        """Smallest power-of-two-ish inner count whose loop takes >= sample_target_s()."""
        target = self.sample_target_s()
        inner = 1
        while True:
            elapsed = self._run(fn, inner)
            if elapsed >= target or inner >= 1 << 20:
                return inner
            # jump close to the target, but never more than 100x in one step (the first call may be slow)
            factor = target / max(elapsed, 1e-9)
            inner = min(1 << 20, max(inner * 2, min(inner * 100, math.ceil(inner * factor * 1.2))))

    @staticmethod
    def _run(fn: Callable[[], object], inner: int) -> float:
        """Seconds for `inner` calls, with Python's garbage collector off (as timeit and
        torch.utils.benchmark do): a full collection, ~0.25 s in a process that imported torch, would
        otherwise land in whichever sample crossed the collector's allocation threshold."""
        enabled = gc.isenabled()
        gc.disable()
        try:
            t0 = time.perf_counter_ns()
            for _ in range(inner):
                fn()
            return (time.perf_counter_ns() - t0) * 1e-9
        finally:
            if enabled:
                gc.enable()

    def measure(self, fn: Callable[[], object]) -> Samples:
        keep_allocator_warm()
        quiet = 0  # the warm-up's fault-free calls in a row: they count toward settle's (each round's
        # warm-up call would otherwise be followed by at least one more call, 2 per round instead of 1)
        for _ in range(self.warmup):
            before = minor_faults()
            fn()
            quiet = quiet + 1 if minor_faults() == before else 0
        self.settle(fn, quiet)
        inner = self.inner or self.calibrate(fn)
        times = []
        faults = fault_samples = 0
        for _ in range(self.samples):
            if self.between is not None:
                self.between()  # outside the fault count too: a flush touches only its own, mapped buffer
            before = minor_faults()
            times.append(self._run(fn, inner) / inner)
            faults += minor_faults() - before
            fault_samples += minor_faults() > before
        extra = {"minor_faults": faults, "fault_samples": fault_samples, "timed_calls": inner * self.samples}
        return Samples(times, inner, self.name, self.warmup, extra)
