"""measure_interleaved alternates the callables round by round, keeps every raw sample, and calibrates
each callable once (later rounds reuse its inner count)."""

from __future__ import annotations

import itertools
import time

from normbench.timing import measure_interleaved
from normbench.timing.cpu import CpuTimer


def test_rounds_alternate_and_keep_all_samples():
    log = []

    def work(name, seconds):
        def fn():
            log.append(name)
            t = time.perf_counter() + seconds
            while time.perf_counter() < t:
                pass

        return fn

    timer = CpuTimer(samples=12, warmup=2, min_sample_s=1e-3)
    out = measure_interleaved(timer, {"a": work("a", 2e-4), "b": work("b", 4e-4)}, rounds=4)
    assert len(out["a"].times) == len(out["b"].times) == 12
    # four blocks of a then b: the order switches 7 times
    switches = sum(1 for x, y in zip(log, log[1:], strict=False) if x != y)
    assert switches == 7
    # calibrated once: every later round runs the same inner count per sample, plus one warm-up call
    # (fault-free here, so it also satisfies CpuTimer.settle: no further settling call)
    calls_a = [len(list(g)) for k, g in itertools.groupby(log) if k == "a"]
    assert len(set(calls_a[1:])) == 1 and calls_a[1] == 3 * out["a"].inner + 1
    assert out["b"].inner <= out["a"].inner  # the slower callable needs fewer calls per sample
    assert timer.samples == 12 and timer.warmup == 2  # the caller's timer is not modified
