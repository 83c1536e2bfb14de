"""Paired rounds cancel the machine's phases: on a fake clock whose speed jumps between phases, absolute
times scatter but each round's ratio is exact; the order within rounds is shuffled by a recorded seed; the
median's interval comes from order statistics; a CUDA timer (faked events) pairs the same way."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from normbench.timing import cpu as cpu_module
from normbench.timing import measure_interleaved
from normbench.timing.cpu import CpuTimer
from normbench.timing.paired import median_interval, paired_ratios, round_values


class PhasedClock:
    """perf_counter_ns that advances only inside the timed callables: a call of `fn(work)` costs work
    times the machine's current slowness, which moves between phases every `phase_calls` calls."""

    def __init__(self, slowness=(1.0, 3.0, 1.5, 7.0), phase_calls: int = 500):
        self.now, self.calls = 0, 0
        self.slowness, self.phase_calls = slowness, phase_calls
        self.order: list[str] = []

    def perf_counter_ns(self) -> int:
        return self.now

    def fn(self, name: str, work_ns: int):
        def call():
            phase = (self.calls // self.phase_calls) % len(self.slowness)
            self.calls += 1
            self.now += int(work_ns * self.slowness[phase])
            if not self.order or self.order[-1] != name:
                self.order.append(name)

        return call


def test_ratios_are_exact_while_the_machine_changes_speed(monkeypatch):
    clock = PhasedClock()
    monkeypatch.setattr(cpu_module, "time", SimpleNamespace(perf_counter_ns=clock.perf_counter_ns))
    timer = CpuTimer(warmup=1, samples=24, min_sample_s=20e-6)
    fns = {"impl": clock.fn("impl", 2_000), "ref": clock.fn("ref", 1_000)}
    m = measure_interleaved(timer, fns, rounds=24, seed=7)
    times = m["impl"].times
    assert max(times) / min(times) > 2  # the phases move the seconds ...
    ratios = paired_ratios(m["impl"], m["ref"])
    assert len(ratios) == 24
    # ... but a round is short against a phase: a ratio is exact unless a phase boundary fell inside it
    exact = sum(r == pytest.approx(2.0, rel=1e-9) for r in ratios)
    assert exact >= 20
    assert median_interval(ratios)[0] == pytest.approx(2.0, rel=1e-9)


class RecordingTimer:
    """A timer that only records which callable each visit measured."""

    def __init__(self, samples: int):
        self.samples, self.warmup, self.visits = samples, 0, []

    def measure(self, fn):
        from normbench.timing import Samples

        self.visits.append(fn.__name__)
        return Samples([1.0] * self.samples, 1, "recording", 0)


def test_order_within_rounds_is_shuffled_by_the_seed():
    def orders(seed):
        def named(n):
            def f():
                return None

            f.__name__ = n
            return f

        timer = RecordingTimer(samples=12)
        measure_interleaved(timer, {n: named(n) for n in ("a", "b", "c")}, rounds=12, seed=seed)
        return timer.visits

    first, again, other = orders(3), orders(3), orders(4)
    assert first == again  # recorded seed: the same order every time
    assert first != other
    rounds = [first[i : i + 3] for i in range(0, 36, 3)]
    assert all(sorted(r) == ["a", "b", "c"] for r in rounds)  # every callable once per round
    assert len({tuple(r) for r in rounds}) > 1  # and not always in the same order
    assert orders(None) == ["a", "b", "c"] * 12  # without a seed, the order of fns


def test_round_values_take_the_median_of_each_rounds_samples():
    s = SimpleNamespace(times=[1.0, 3.0, 2.0, 10.0, 11.0, 30.0], extra={"round_sizes": [3, 3]})
    assert round_values(s) == [2.0, 11.0]
    with pytest.raises(ValueError):
        paired_ratios(s, SimpleNamespace(times=[1.0], extra={"round_sizes": [1]}))


def test_median_interval_is_the_sign_test_interval():
    values = list(range(1, 31))  # 30 values: P(B(30, 1/2) <= 9) = 0.0214, <= 10 = 0.0494
    mid, lo, hi = median_interval(values)
    assert (mid, lo, hi) == (15.5, 10, 21)
    assert all(math.isnan(v) for v in median_interval([1, 2, 3, 4, 5])[1:])  # 2/32 > 5%: no interval
    assert median_interval([1, 2, 3, 4, 5, 6])[1:] == (1, 6)  # 2/64 <= 5%


class FakeEvent:
    """torch.cuda.Event on a fake device clock: record() stamps the clock, elapsed_time() in ms."""

    def __init__(self, clock, **_):
        self.clock, self.t = clock, None

    def record(self):
        self.t = self.clock.now

    def elapsed_time(self, end) -> float:
        return (end.t - self.t) / 1e6


def test_cuda_timer_pairs_rounds_the_same_way(monkeypatch):
    """No GPU here: torch.cuda's events and synchronize are faked on a phased clock; what is tested is that
    the CUDA timer's one-sample visits give measure_interleaved one paired sample per round."""
    import torch

    from normbench.timing import cuda as cuda_module

    clock = PhasedClock(phase_calls=50)
    monkeypatch.setattr(torch.cuda, "Event", lambda **kw: FakeEvent(clock, **kw))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: None)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(cuda_module, "read_clocks", lambda device=None: {})
    timer = cuda_module.CudaTimer(warmup=1, samples=16, cache="warm", min_sample_s=10e-6)
    fns = {"impl": clock.fn("impl", 3_000), "ref": clock.fn("ref", 1_000)}
    m = measure_interleaved(timer, fns, rounds=16, seed=1)
    assert m["impl"].extra["round_sizes"] == [1] * 16
    ratios = paired_ratios(m["impl"], m["ref"])
    assert median_interval(ratios)[0] == pytest.approx(3.0, rel=1e-9)
