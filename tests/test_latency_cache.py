"""Cold-cache mode: the LLC size from sysfs (with stated fallbacks), a flush buffer twice that, never constant."""

from __future__ import annotations

import statistics

import pytest
import torch

from normbench.timing import cache as cache_mod
from normbench.timing import timer_for
from normbench.timing.cache import FALLBACK_CACHE_BYTES, FlushBuffer, cpu_llc_bytes, flush_buffer
from normbench.timing.cpu import CpuTimer


def _fake_cache(root, entries):
    for i, (level, kind, size) in enumerate(entries):
        d = root / f"index{i}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")


def test_llc_is_the_highest_data_or_unified_level(tmp_path):
    _fake_cache(
        tmp_path,
        [(1, "Data", "48K"), (1, "Instruction", "32K"), (2, "Unified", "2048K"), (3, "Unified", "260M")],
    )
    assert cpu_llc_bytes(tmp_path) == (260 * 2**20, "sysfs L3")


def test_llc_fallback_when_unreadable(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_mod, "_getconf_l3", lambda: 0)
    assert cpu_llc_bytes(tmp_path) == (FALLBACK_CACHE_BYTES, "fallback (cache size unreadable)")
    monkeypatch.setattr(cache_mod, "_getconf_l3", lambda: 32 * 2**20)
    assert cpu_llc_bytes(tmp_path) == (32 * 2**20, "getconf LEVEL3_CACHE_SIZE")


def test_flush_buffer_is_random_and_rewritten_each_flush():
    f = FlushBuffer(3 * 2**20 + 12)
    assert f.nbytes >= 3 * 2**20 and f.buf.unique().numel() > 1000  # not constant
    before = f.buf.clone()
    f()
    assert torch.equal(f.buf, ~before)  # every element rewritten
    f()
    assert torch.equal(f.buf, before)


def test_process_flush_buffer_is_twice_the_llc():
    assert flush_buffer("cpu").nbytes >= 2 * cpu_llc_bytes()[0]
    assert flush_buffer("cpu") is flush_buffer("cpu")  # allocated once per process


def test_timer_for_cold_flushes_before_every_single_call_sample():
    cold = timer_for("cpu", cache="cold", samples=4, warmup=0)
    assert isinstance(cold, CpuTimer) and cold.inner == 1 and cold.between is flush_buffer("cpu")
    assert timer_for("cpu", cache="warm").between is None
    with pytest.raises(ValueError, match="cuda"):
        timer_for("cpu", graph=True)
    with pytest.raises(ValueError, match="cold"):
        timer_for("cpu", cache="tepid")


@pytest.mark.timing  # cold > 1.5x warm holds on a quiet machine, not under a neighbour's load (make timing)
def test_flush_changes_the_timing_state():
    """A 1 MiB sum fits the 2 MiB L2 when warm; after the flush its data comes from memory. One thread, so
    no OpenMP wake-up noise; medians of 15 single-call samples; cold must be clearly slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        x = torch.randn(2**18)
        warm = CpuTimer(samples=15, warmup=3, inner=1).measure(lambda: x.sum())
        cold = CpuTimer(samples=15, warmup=3, inner=1, between=flush_buffer("cpu")).measure(lambda: x.sum())
    finally:
        torch.set_num_threads(threads)
    assert statistics.median(cold.times) > 1.5 * statistics.median(warm.times)
