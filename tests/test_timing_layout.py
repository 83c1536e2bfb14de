"""A heap shift draws seeded sizes within its span; each round of a shifted case holds a new block through its calls."""

from __future__ import annotations

import weakref

from latency_helpers import run

from normbench.timing import layout, measure_interleaved
from normbench.timing.cpu import CpuTimer
from normbench.timing.layout import LAYOUT_SPAN_BYTES, HeapShift, heap_shift


def test_block_sizes_are_seeded_and_within_the_span():
    sizes = [b.numel() for b in _blocks(HeapShift(7), 50)]
    again = [b.numel() for b in _blocks(HeapShift(7), 50)]
    assert sizes == again  # the same seed, the same layouts
    assert all(0 < n <= LAYOUT_SPAN_BYTES and n % 64 == 0 for n in again)
    assert len(set(again)) > 40  # 50 draws from 65,536 sizes: nearly all distinct
    assert [b.numel() for b in _blocks(HeapShift(8), 50)] != again


def _blocks(shift, n):
    return [shift() for _ in range(n)]


def test_each_round_holds_a_new_block_through_its_calls():
    events = []
    held = []

    class Recorder:
        def __call__(self):
            assert all(ref() is None for ref in held)  # the last round's block is gone first
            block = HeapShift(len(held))()
            held.append(weakref.ref(block))
            events.append(("block", len(held)))
            return block

    def fn(name):
        def call():
            # the current round's block is alive while its members run
            ref = held[-1]
            assert ref() is not None
            events.append((name, len(held)))

        return call

    timer = CpuTimer(samples=6, warmup=1, min_sample_s=1e-5, inner=1)
    measure_interleaved(timer, {"a": fn("a"), "b": fn("b")}, rounds=3, seed=1, relayout=Recorder())
    assert [e for e in events if e[0] == "block"] == [("block", 1), ("block", 2), ("block", 3)]
    # every call of round r comes after block r and before block r + 1
    for i, (what, r) in enumerate(events):
        if what != "block":
            assert max(n for w, n in events[: i + 1] if w == "block") == r


def test_only_cpu_cases_with_layout_shift_get_one():
    assert heap_shift({"layout": "fixed", "device": "cpu"}, 3) is None
    assert heap_shift({"layout": "shift", "device": "cuda"}, 3) is None
    assert isinstance(heap_shift({"layout": "shift", "device": "cpu"}, 3), HeapShift)


def test_a_latency_case_with_layout_shift_takes_one_block_per_round(monkeypatch):
    calls = []
    original = layout.HeapShift.__call__

    def counted(self):
        calls.append(self.span)
        return original(self)

    monkeypatch.setattr(layout.HeapShift, "__call__", counted)
    metrics, _, status, error = run("latency", "rmsnorm", "module", tokens=8, d=16, layout="shift")
    assert status == "ok", error
    assert len(calls) == 3 and metrics["time_vs_ref_median"] > 0  # FAST: 3 rounds
    calls.clear()
    _, _, status, _ = run("latency", "rmsnorm", "module", tokens=8, d=16)  # layout = "fixed"
    assert status == "ok" and calls == []
