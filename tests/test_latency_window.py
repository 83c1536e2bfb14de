"""The CPU timer's floor on the whole run (min_run_s) raises the inner count so that all samples together
span at least min_run_s, spread over every round's samples; it never lowers it, and cold cache keeps one
call per sample. A fake clock makes every call last exactly 1 ms, so the counts are exact."""

from __future__ import annotations

import pytest

import normbench.timing.cpu as cpu
from normbench.timing import measure_interleaved, timer_for


@pytest.fixture
def clock(monkeypatch):
    """A clock that only moves when `tick` (the timed call) runs: 1 ms per call."""
    now = [0]
    monkeypatch.setattr(cpu.time, "perf_counter_ns", lambda: now[0])

    def tick():
        now[0] += 1_000_000

    return tick


def test_floor_raises_the_inner_count_to_cover_the_run(clock):
    # calibration jumps from 1 call to the target with a 1.2 margin: 2 ms alone -> 3 calls; 12 samples
    # over >= 60 ms need 5 ms samples -> 6 calls
    assert cpu.CpuTimer(samples=12, warmup=0, min_sample_s=2e-3).measure(clock).inner == 3
    timer = cpu.CpuTimer(samples=12, warmup=0, min_sample_s=2e-3, min_run_s=0.06)
    assert timer.sample_target_s() == pytest.approx(5e-3)
    s = timer.measure(clock)
    assert s.inner == 6 and len(s.times) == 12
    assert s.inner * len(s.times) * 1e-3 >= 0.06


def test_floor_never_lowers_the_sample_length(clock):
    timer = cpu.CpuTimer(samples=10, warmup=0, min_sample_s=4e-3, min_run_s=0.01)
    assert timer.sample_target_s() == 4e-3
    alone = cpu.CpuTimer(samples=10, warmup=0, min_sample_s=4e-3)
    assert timer.measure(clock).inner == alone.measure(clock).inner == 5


def test_rounds_spread_the_floor_over_all_samples(clock):
    """15 samples in 5 rounds of 3: the floor is per 15 samples (4 ms each -> 5 calls with the margin),
    not per round's 3 (which would make 20 ms samples)."""
    timer = cpu.CpuTimer(samples=15, warmup=0, min_sample_s=1e-3, min_run_s=0.06)
    measured = measure_interleaved(timer, {"a": clock, "b": clock}, rounds=5)
    for s in measured.values():
        assert len(s.times) == 15 and s.inner == 5


def test_cold_cache_keeps_one_call_per_sample(monkeypatch):
    monkeypatch.setattr("normbench.timing.cache.flush_buffer", lambda device="cpu": lambda: None)
    timer = timer_for("cpu", cache="cold", samples=3, warmup=0, min_sample_s=1e-3, min_run_s=1.0)
    assert timer.inner == 1
