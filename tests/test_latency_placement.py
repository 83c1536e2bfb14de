"""Placements: rounds cycle through copies of a case's tensors, per-copy medians come from the round sizes,
the copy count respects the samples, device and memory budget, and warm-up calls count toward settling."""

from __future__ import annotations

import pytest
import torch
from latency_helpers import run

import normbench.benches._latency.placement as placement
from normbench.benches._latency.placement import (
    per_copy_medians,
    placement_count,
    placement_rows,
    rounds_for,
)
from normbench.benches._tensors import make_step
from normbench.timing import Samples, measure_interleaved
from normbench.timing.cpu import CpuTimer


def test_rounds_take_the_placements_in_turn_and_record_their_sizes():
    calls = {"a0": 0, "a1": 0, "a2": 0}

    def counter(name):
        def fn():
            calls[name] += 1

        return fn

    timer = CpuTimer(samples=10, warmup=1, min_sample_s=1e-4, inner=1)
    out = measure_interleaved(timer, {"a": [counter("a0"), counter("a1"), counter("a2")]}, rounds=5)
    s = out["a"]
    assert s.extra["round_sizes"] == [2, 2, 2, 2, 2] and len(s.times) == 10
    # rounds 0 and 3 on copy 0, 1 and 4 on copy 1, 2 on copy 2: each round = warm-up + (settle) + samples
    assert calls["a2"] < calls["a1"] and calls["a2"] < calls["a0"]
    assert all(n > 0 for n in calls.values())


def test_per_copy_medians_group_samples_by_round():
    # 3 copies, 5 rounds of sizes 2,2,1,1,1: copy 0 <- rounds 0,3; copy 1 <- rounds 1,4; copy 2 <- round 2
    times = [1.0, 3.0, 10.0, 10.0, 5.0, 2.0, 12.0]
    s = Samples(times, 1, "t", 0, {"round_sizes": [2, 2, 1, 1, 1]})
    assert per_copy_medians(s, 3) == [2.0, 10.0, 5.0]  # medians of [1, 3, 2], [10, 10, 12], [5]
    rows = {r["metric"]: r["value"] for r in placement_rows(s, 3)}
    assert rows == {"placements": 3.0, "placement_spread": 10.0 / 2.0}
    assert {r["metric"] for r in placement_rows(s, 1)} == {"placements"}


def _params(**kw):
    p = {"device": "cpu", "cuda_graph": False, "placements": 5, "samples": 15, "copy_probe": True}
    p.update(kw)
    return p


def test_placement_count_respects_samples_device_and_budget(monkeypatch):
    x = torch.zeros(256, 256)  # 256 KiB
    step, _ = make_step(type("B", (), {"fn": staticmethod(lambda t: t), "params": []})(), x, "fwd")
    assert placement_count(_params(), x, step) == 5
    assert placement_count(_params(samples=3), x, step) == 3
    assert placement_count(_params(device="cuda"), x, step) == 1
    assert placement_count(_params(cuda_graph=True), x, step) == 1
    # x and its copy-probe output per copy: 512 KiB; a 1 MiB budget affords the first copy + 2 more
    monkeypatch.setattr(placement, "PLACEMENT_BUDGET_BYTES", 2**20)
    assert placement_count(_params(), x, step) == 3
    assert placement_count(_params(copy_probe=False), x, step) == 5


def test_one_round_per_sample_covers_every_copy():
    assert rounds_for(_params(placements=1), 1) == 15  # one paired sample of every member per round
    assert rounds_for(_params(copy_probe=False), 1) == 15  # the reference is always in the round set
    assert rounds_for(_params(copy_probe=False), 4) == 15
    assert rounds_for(_params(samples=3), 3) == 3
    assert rounds_for(_params(cuda_graph=True), 1) == 1  # graphs are captured once: one round


def test_copies_share_the_upstream_gradient_values_at_other_addresses():
    m = torch.nn.LayerNorm(8)
    built = type("B", (), {"fn": m, "params": list(m.parameters())})()
    x = torch.randn(4, 8)
    first, _ = make_step(built, x, "fwd+bwd")
    second, _ = make_step(built, x.clone(), "fwd+bwd", dy=first.dy)
    assert torch.equal(first.dy, second.dy) and first.dy.data_ptr() != second.dy.data_ptr()


def test_a_case_with_three_placements_records_them_and_keeps_them_resident():
    one, _, status1, _ = run("latency", "layernorm", "module", tokens=64, d=128, placements=1)
    three, _, status3, _ = run("latency", "layernorm", "module", tokens=64, d=128, placements=3)
    assert status1 == status3 == "ok"
    assert one["placements"] == 1 and "placement_spread" not in one
    assert three["placements"] == 3 and three["placement_spread"] >= 1.0
    # two more inputs and two more copy-probe outputs of 64 x 128 fp32 stay alive while timing
    assert three["resident_extra_bytes"] - one["resident_extra_bytes"] >= 2 * 64 * 128 * 4


@pytest.mark.parametrize("faulting_warmups", [0, 3])
def test_warm_up_calls_without_faults_count_toward_settling(monkeypatch, faulting_warmups):
    """Quiet warm-up calls satisfy settle's "fault-free calls in a row"; after faulting ones it still
    calls until two calls in a row are quiet."""
    import normbench.timing.cpu as cpu

    counter = {"faults": 0, "calls": 0}

    def fn():
        counter["calls"] += 1
        if counter["calls"] <= faulting_warmups:
            counter["faults"] += 1  # this call maps a fresh page

    monkeypatch.setattr(cpu, "minor_faults", lambda: counter["faults"])
    monkeypatch.setattr(cpu, "keep_allocator_warm", lambda: {"applied": True})
    CpuTimer(samples=2, warmup=3, inner=1).measure(fn)
    # 3 warm-up calls, 2 samples, and settling calls only when the warm-up's last calls faulted
    assert counter["calls"] == 3 + 2 + (2 if faulting_warmups else 0)
