"""The CUDA timer (needs a GPU; skipped without one): events give the time of a known-length kernel, the
L2 flush buffer is twice the device's L2 and makes an L2-resident copy slower, graph mode subtracts the
flush, and the latency bench runs end to end on the device with exact peak memory."""

from __future__ import annotations

import statistics

import pytest
import torch
from latency_helpers import run

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


def _sleep_kernel_seconds(cycles: int) -> float:
    """torch.cuda._sleep spins `cycles` GPU clock cycles; its length at the current SM clock."""
    from normbench.timing.cuda import read_clocks

    mhz = read_clocks().get("sm_clock_mhz")
    if mhz is None:
        pytest.skip("SM clock not readable (pynvml missing): no known-length kernel")
    return cycles / (mhz * 1e6)


def test_events_time_a_known_length_kernel():
    from normbench.timing.cuda import CudaTimer

    cycles = 2_000_000
    expected = _sleep_kernel_seconds(cycles)
    s = CudaTimer(samples=10, warmup=2, cache="warm", min_sample_s=1e-9).measure(
        lambda: torch.cuda._sleep(cycles)
    )
    assert s.inner == 1 and len(s.times) == 10
    # the clock may boost or throttle between the read and the run: a factor 2, not a speed target
    assert expected / 2 < statistics.median(s.times) < expected * 2


def test_flush_buffer_is_twice_l2_and_evicts():
    from normbench.timing.cache import flush_buffer, gpu_l2_bytes
    from normbench.timing.cuda import CudaTimer

    l2, _ = gpu_l2_bytes()
    assert flush_buffer("cuda").nbytes >= 2 * l2
    x = torch.randn(
        max(l2 // 16, 2**18), device="cuda"
    )  # a quarter of L2 read, a quarter written: L2-resident
    warm = CudaTimer(samples=30, cache="warm", min_sample_s=1e-9).measure(lambda: x.clone())
    cold = CudaTimer(samples=30, cache="cold").measure(lambda: x.clone())
    assert statistics.median(cold.times) > statistics.median(warm.times)


def test_graph_mode_subtracts_the_flush():
    from normbench.timing.cuda import CudaTimer

    x = torch.randn(2**24, device="cuda")  # 64 MiB: memory-bound, far above launch overhead
    eager = CudaTimer(samples=20, cache="cold").measure(lambda: x.clone())
    graph = CudaTimer(samples=20, cache="cold", graph=True).measure(lambda: x.clone())
    e, g = statistics.median(eager.times), statistics.median(graph.times)
    assert graph.inner >= 1 and 0.5 * e < g < 1.5 * e


@pytest.mark.parametrize("mode", ["fwd", "fwd+bwd"])
@pytest.mark.parametrize("cache", ["cold", "warm"])
def test_latency_bench_on_cuda(mode, cache):
    m, rows, status, error = run(
        "latency",
        "layernorm",
        "module",
        tokens=1024,
        d=1024,
        device="cuda",
        dtype="bf16",
        mode=mode,
        cache=cache,
    )
    assert status == "ok", error
    assert 0 < m["copy_fraction"] and m["err_ratio_max"] <= 2
    assert m["peak_mem"] >= 1024 * 1024 * 2  # at least the output


def test_identity_peak_memory_is_exactly_the_output():
    m, _, status, error = run(
        "latency", "identity", "copy", tokens=1024, d=1024, device="cuda", copy_probe=False
    )
    assert status == "ok", error
    assert m["peak_mem"] == 1024 * 1024 * 4


def test_graph_mode_bench_case():
    m, _, status, error = run(
        "latency",
        "rmsnorm",
        "functional",
        tokens=4096,
        d=4096,
        device="cuda",
        dtype="bf16",
        cache="cold",
        cuda_graph=True,
        samples=10,
    )
    assert status == "ok", error
    assert m["time_median"] > 0


def test_device_info_names_the_gpu():
    from normbench.timing.cuda import device_info

    info = device_info(0)
    assert info["gpu"] == torch.cuda.get_device_name(0) and info["cuda"] == torch.version.cuda
    assert "sm_clock_mhz" in info or info["clocks"].startswith("not read")
