"""The GPU path runs end to end on any machine under a CPU stand-in of the CUDA API (tests/cuda_standin.py,
autospecced from torch's own functions): the GPU suites expand, the latency and block benches time CUDA cases
with events, the L2 flush and graph replay, read NVML clocks and CUDA memory statistics, a stability case trains
on "cuda"; and no row made under the stand-in can be stored."""

from __future__ import annotations

import dataclasses
import math

import pytest
from conftest import REPO
from cuda_standin import NAME, cuda_standin

from normbench.benches import RunContext
from normbench.core.errors import NormbenchError
from normbench.runner import run_one
from normbench.suite.expand import expand
from normbench.suite.load import load_suite

SMALL = {"tokens": 16, "d": 64, "samples": 4, "min_sample_s": 1e-4, "warmup_calls": 1}


@pytest.fixture(scope="module")
def gpu_cases():
    """The GPU suites' cases (expanded as a GPU owner's `make gpu-check` and suites/gpu.toml would)."""
    cases = [c for name in ("gpu-check", "gpu") for c in expand(load_suite(REPO / "suites" / f"{name}.toml"))]
    assert cases and all(c.params.get("device") == "cuda" for c in cases if c.kind in ("latency", "block"))
    return cases


def _small(case, **extra):
    params = {**case.params, **{k: v for k, v in SMALL.items() if k in case.params}, **extra}
    return dataclasses.replace(case, params=params)


def _run(case):
    rows, status, error = run_one(case, RunContext(threads=1))
    return {r["metric"]: r for r in rows}, status, error


def _pick(cases, kind, **want):
    return next(c for c in cases if c.kind == kind and all(c.params.get(k) == v for k, v in want.items()))


@pytest.mark.parametrize(
    "kind, want",
    [
        ("latency", {"cache": "cold", "mode": "fwd+bwd", "cuda_graph": False}),
        ("latency", {"cuda_graph": True}),
        ("block", {"block": "batchnorm_folded"}),
    ],
)
def test_cuda_timing_cases_run_under_the_stand_in(gpu_cases, kind, want):
    case = _small(_pick(gpu_cases, kind, **want))
    with cuda_standin():
        metrics, status, error = _run(case)
    assert status == "ok", error
    assert "time_median" in metrics and math.isfinite(metrics["time_median"]["value"])
    assert metrics["time_median"]["value"] >= 0


def test_the_cuda_timer_reads_events_flushes_l2_replays_graphs_and_reads_clocks():
    import torch

    from normbench.timing import timer_for
    from normbench.timing.cuda import device_info

    calls = []
    with cuda_standin():
        x = torch.ones(64, device="cuda")
        assert x.device.type == "cpu"  # the stand-in's tensors live on the CPU
        for cache, graph in (("cold", False), ("warm", False), ("cold", True), ("warm", True)):
            timer = timer_for("cuda", cache=cache, graph=graph, samples=3, min_sample_s=1e-4, warmup=1)
            s = timer.measure(lambda: calls.append(1) or x.mul_(1.0))
            assert len(s.times) == 3 and all(t >= 0 for t in s.times), (cache, graph, s.times)
            assert s.extra["sm_clock_mhz"] == 1500.0 and s.extra["graph"] is graph
            assert (s.extra["flush_bytes"] > 0) is (cache == "cold")
            assert timer.name.startswith("cuda-events")
        info = device_info()
    assert info["gpu"] == NAME and info["gpu_l2_mib"] == 4.0 and info["sm_clock_max_mhz"] == 1980.0
    assert len(calls) > 12  # graph replays ran the body (eagerly), not nothing


def test_clocks_say_why_they_were_not_read_without_nvml():
    from normbench.timing.cuda import read_clocks

    with cuda_standin(nvml=False):
        import sys

        sys.modules.pop("pynvml", None)
        assert read_clocks()["clocks"].startswith("not read: pynvml not importable")


def test_peak_memory_on_cuda_reads_the_allocator_statistics():
    from normbench.benches._memory import peak_call_bytes

    with cuda_standin() as peak:
        peak["bytes"] = 4096
        value, method = peak_call_bytes(lambda: None, "cuda", lambda: __import__("contextlib").nullcontext())
    assert method == "cuda max_memory_allocated" and value == 0.0  # reset before the call


def test_a_stability_case_trains_on_cuda_under_the_stand_in(write_suite):
    suite = write_suite(
        'name = "s"\n[[bench]]\nkind = "stability"\nnorms = ["layernorm"]\n[bench.params]\n'
        'device = "cuda"\ndepth = 2\nd = 16\nheads = 2\nffn = 32\nseq = 16\nbatch = 4\nsteps = 4\nevery = 2\n'
        "eval_batches = 1\n"
    )
    (case,) = expand(load_suite(suite))
    with cuda_standin():
        metrics, status, error = _run(case)
    assert status in ("ok", "stuck"), error  # 4 steps: whether it learned is not the point
    assert math.isfinite(metrics["final_loss"]["value"])


def test_rows_made_under_the_stand_in_are_never_stored(tmp_path, tiny_suite, write_suite, cli):
    from _stores import create_store

    from normbench.core.case import Case

    store = create_store(tmp_path, {"run_id": "r", "started": "r", "env": {}, "suite": "s"})
    case = Case("latency", "layernorm", "module", {"device": "cuda"}, 0, "c1")
    with cuda_standin(), pytest.raises(NormbenchError, match="CUDA stand-in"):
        store.write_case(case, [{"metric": "time", "unit": "s", "value": 1.0}], "ok", None)
    assert not list(store.parts.glob("*.parquet"))


def test_the_environment_records_the_stand_in_as_its_gpu():
    from normbench.results.env import fingerprint

    with cuda_standin():
        env = fingerprint()
    assert env["gpu"] == NAME and env["gpu_count"] == 1 and env["cuda_available"] is True
    assert env["timer_cuda"].startswith("CUDA events")


def test_nvml_finds_a_device_without_pci_ids_by_its_index():
    import sys
    import types

    import torch

    from normbench.timing.cuda import read_clocks

    with cuda_standin():
        bare = types.SimpleNamespace(name=NAME, major=9, minor=0)  # no pci_* attributes (an old torch)
        torch.cuda.get_device_properties.side_effect = lambda device=None: bare
        clocks = read_clocks(None)
        sys.modules["pynvml"].nvmlDeviceGetHandleByIndex.assert_called_once_with(0)
    assert clocks["sm_clock_mhz"] == 1500.0, clocks
