"""A latency case's number does not depend on process state: the allocator policy stops per-call page faults
(and they are recorded and flagged when they happen), `samples = N` keeps N, the fp64 reference is computed
once per key and gives the same errors, the fast preset times only, and only torch's dtype/device
'not implemented' skips a case."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
from latency_helpers import make_case, per_tensor, run

from normbench.benches import RunContext
from normbench.runner import run_one
from normbench.timing import Samples, measure_interleaved
from normbench.timing.cpu import CpuTimer

BIG = 10 * 2**20  # 40 MiB of float32: above glibc's largest dynamic mmap threshold (32 MiB)


def _allocate_big():
    torch.empty(BIG).fill_(1.0)  # touches every page of a fresh 40 MiB block, then frees it


def test_allocator_policy_leaves_timed_calls_without_page_faults():
    from normbench.timing.process import keep_allocator_warm

    if not keep_allocator_warm()["applied"]:
        pytest.skip("no glibc mallopt here")
    s = CpuTimer(samples=5, warmup=1, min_sample_s=1e-3).measure(_allocate_big)
    # Without the policy every call faults in all 10240 pages of its 40 MiB temporary. The count is
    # process-wide (getrusage), so a stray fault of another thread of the test process may show: allow far
    # less than one per call, never a page of the temporary per call.
    assert s.extra["timed_calls"] >= 5 and s.extra["minor_faults"] < s.extra["timed_calls"], s.extra


@pytest.mark.slow
def test_default_malloc_faults_every_call_and_the_timer_counts_it(child_env):
    """A 40 MiB temporary in a fresh process with NORMBENCH_ALLOCATOR=default: glibc serves it with mmap and
    unmaps it at free (it is above the largest dynamic threshold), so every call faults in its 10240 pages.
    (Below 32 MiB the outcome varies from one fresh process to the next, which is the point of the policy:
    RMSNorm 512x1024 took ~1000 faults per call in some processes and ~5 in others.)"""
    code = (
        "import json, torch\nfrom normbench.timing.cpu import CpuTimer\n"
        f"fn = lambda: torch.empty({BIG}).fill_(1.0)\n"
        "s = CpuTimer(samples=3, warmup=1, min_sample_s=1e-3).measure(fn)\n"
        "print(json.dumps(s.extra))"
    )
    env = child_env(NORMBENCH_ALLOCATOR="default")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    extra = json.loads(proc.stdout.strip().splitlines()[-1])
    assert extra["minor_faults"] / extra["timed_calls"] >= 1 and extra["fault_samples"] == 3


def test_a_case_with_megabyte_temporaries_takes_no_faults_under_the_policy():
    m, _, status, _ = run("latency", "rmsnorm", "module", tokens=512, d=1024, preset="fast")
    assert status == "ok" and m["allocator_warm"] == 1 and m["faulted"] == 0


def test_fault_rows_and_flag_from_the_counts():
    from normbench.benches._latency.process import process_rows

    def samples(faults, fault_samples, calls, n=4):
        extra = {"minor_faults": faults, "fault_samples": fault_samples, "timed_calls": calls}
        return Samples([1e-3] * n, 1, "t", 0, extra)

    def rows_of(measured):
        return {r["metric"]: r["value"] for r in process_rows(measured, 64)}

    rows = rows_of({"norm": samples(0, 0, 8), "copy": samples(0, 0, 4)})
    assert rows["faults_per_call"] == 0 and rows["copy_faults_per_call"] == 0 and rows["faulted"] == 0
    assert rows["resident_extra_bytes"] == 64
    rows = rows_of({"norm": samples(4096, 4, 4)})  # every sample faulted: systematic
    assert rows["faults_per_call"] == 1024 and rows["fault_samples"] == 4 and rows["faulted"] == 1
    rows = rows_of({"norm": samples(0, 0, 4), "copy": samples(4096, 1, 8)})  # one in four of the copy's
    assert rows["copy_faults_per_call"] == 512 and rows["faulted"] == 1
    rows = rows_of({"norm": samples(4096, 1, 10, n=10)})  # one stray event in 10 samples: recorded only
    assert rows["faults_per_call"] == 409.6 and rows["fault_samples"] == 1 and rows["faulted"] == 0


@pytest.mark.parametrize("samples,rounds", [(10, 3), (7, 2), (15, 5), (4, 4)])
def test_interleaved_samples_add_up_to_the_request(samples, rounds):
    timer = CpuTimer(samples=samples, warmup=0, min_sample_s=1e-5)
    out = measure_interleaved(timer, {"a": lambda: None, "b": lambda: None}, rounds)
    assert len(out["a"].times) == len(out["b"].times) == samples
    assert out["a"].extra["timed_calls"] == samples * out["a"].inner


def test_case_with_samples_10_stores_10():
    _, rows, status, _ = run("latency", "layernorm", "module", tokens=64, d=64, samples=10, memory=False)
    assert status == "ok" and sum(1 for r in rows if r["metric"] == "time") == 10


def test_case_records_faults_policy_and_resident_bytes():
    m, rows, status, _ = run("latency", "rmsnorm", "module", tokens=64, d=128)
    assert status == "ok"
    assert m["faults_per_call"] >= 0 and m["faulted"] in (0.0, 1.0)
    policy = next(r for r in rows if r["metric"] == "allocator_warm")
    assert policy["policy"]
    # the outputs kept for the re-check (y, 64x128 fp32) at least
    assert m["resident_extra_bytes"] >= 64 * 128 * 4


def test_warm_case_starts_from_the_flushed_cache_and_counts_the_buffer(monkeypatch):
    """A warm CPU case rewrites the LLC once before its warm-up (the same flush buffer every case sees) and
    counts that buffer as resident; a cold case flushes per sample instead, so no reset row is set."""
    from normbench import timing
    from normbench.timing import cache
    from normbench.timing import process as timing_process

    flushes = []

    class Counting(cache.FlushBuffer):
        def __call__(self):
            flushes.append(1)

    buffer = Counting(2**16)
    # flush_buffer is imported by name where it is used: the cache reset (timing/process.py) and the
    # cold-cache timer (timing/__init__.py)
    for module in (timing, timing_process):
        monkeypatch.setattr(module, "flush_buffer", lambda device="cpu": buffer)
    m, _, status, error = run("latency", "rmsnorm", "module", tokens=64, d=128, memory=False)
    assert status == "ok", error
    assert m["cache_reset"] == 1.0 and len(flushes) == 1
    assert m["resident_extra_bytes"] >= 2**16 + 64 * 128 * 4
    m, _, status, error = run("latency", "rmsnorm", "module", tokens=64, d=128, memory=False, cache="cold")
    assert status == "ok", error
    # per cold sample: 3 rounds of the norm, its reference and the copy probe
    assert m["cache_reset"] == 0.0 and len(flushes) == 1 + 9


def test_reference_is_computed_once_per_key_and_gives_the_same_errors(monkeypatch):
    from normbench.benches._latency import accuracy as _accuracy

    calls = []
    real = _accuracy.exact_outputs

    def counted(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(_accuracy, "exact_outputs", counted)
    ctx = RunContext(threads=1)
    shared = {}
    for impl in ("functional", "composite", "module"):
        rows, status, _ = run_one(make_case("latency", "layernorm", impl, tokens=32, d=48), ctx)
        assert status == "ok"
        shared[impl] = rows
    assert len(calls) == 1  # one reference for the three implementations
    # each implementation's errors equal those computed without the memo (a fresh context per case)
    for impl in ("functional", "composite", "module"):
        alone, _, _ = run_one(make_case("latency", "layernorm", impl, tokens=32, d=48), RunContext(threads=1))
        for metric in ("err_abs", "eager_err_abs", "err_ratio"):
            assert per_tensor(shared[impl], metric) == per_tensor(alone, metric)
    # another seed is another key
    run_one(make_case("latency", "layernorm", "functional", tokens=32, d=48, seed=1), ctx)
    assert len(calls) == 5


def test_fast_preset_times_only():
    m, rows, status, _ = run("latency", "layernorm", "module", tokens=64, d=64, preset="fast")
    assert status == "ok" and "time_median" in m
    metrics = {r["metric"] for r in rows}
    assert not metrics & {"err_abs", "copy_time_median", "copy_fraction", "peak_mem", "recheck_max_change"}


@pytest.mark.parametrize(
    "exc,skipped",
    [
        (RuntimeError("\"addmm_impl_cpu_\" not implemented for 'Half'"), True),
        (
            NotImplementedError(
                "Could not run 'aten::empty_strided' with arguments from the 'CUDA' backend."
            ),
            True,
        ),
        (NotImplementedError("fused kernel not implemented yet"), False),
        (NotImplementedError(), False),
        (RuntimeError("mat1 and mat2 shapes cannot be multiplied"), False),
    ],
)
def test_only_an_unsupported_dtype_or_device_skips(exc, skipped):
    from normbench.benches._latency.first_call import first_call
    from normbench.core.errors import SkipCase

    class Raising:
        def build(self, *a, **k):
            raise exc

    p = {"d": 8, "eps": 1e-5, "device": "cpu", "dtype": "fp16", "seed": 0, "mode": "fwd"}
    x = torch.zeros(2, 8, dtype=torch.float16)
    if skipped:
        with pytest.raises(SkipCase, match="fp16 on cpu"):
            first_call(Raising(), "x", p, x, torch.no_grad)
    else:
        with pytest.raises(type(exc)):
            first_call(Raising(), "x", p, x, torch.no_grad)


def test_report_labels_the_fast_preset_and_lists_faulted_cases():
    import pandas as pd

    from normbench.benches.latency import Latency
    from normbench.core.tables import ReportOptions

    case = make_case("latency", "rmsnorm", "module", tokens=8, d=16, preset="fast")
    base = {
        **case.params,
        "case_id": "c",
        "norm": "rmsnorm",
        "impl": "module",
        "status": "ok",
        "sample": None,
    }
    rows = [("time_median", 2e-6), ("time_min", 1e-6), ("time_iqr", 0.0), ("gbps", 1.0), ("faulted", 1.0)]
    frame = pd.DataFrame([{**base, "unit": "", "metric": m, "value": v} for m, v in rows])
    notes = Latency().report(frame, ReportOptions(machine="test"))[0].notes
    assert any(n.startswith("Preset fast (1 of 1 cases): times only") for n in notes)
    assert any(n.startswith("⚠ Page faults") and "rmsnorm:module fwd 8x16" in n for n in notes)
    frame.loc[frame["metric"] == "faulted", "value"] = 0.0
    frame["preset"] = "full"
    notes = Latency().report(frame, ReportOptions(machine="test"))[0].notes
    assert not any("Preset fast" in n or "Page faults" in n for n in notes)
