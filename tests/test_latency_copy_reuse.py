"""The copy probe is timed once per (shape, dtype, device, cache, mode, timer settings) in a process and
reused by later cases, which say so (copy_reused, copy_from); any other key, or copy_reuse = false, times it
again, and the norm keeps its rounds either way."""

from __future__ import annotations

from latency_helpers import make_case

from normbench.benches import RunContext
from normbench.runner import run_one


def run_in(ctx, norm, impl, **params):
    params = {"tokens": 64, "d": 128, "accuracy_rows": 0, "memory": False, **params}
    case = make_case("latency", norm, impl, **params)
    rows, status, error = run_one(case, ctx)
    assert status == "ok", error
    metrics = {r["metric"]: r for r in rows if r.get("sample") is None and "tensor" not in r}
    return case, metrics


def test_second_case_of_a_shape_reuses_the_first_cases_probe():
    ctx = RunContext(threads=1)
    first, a = run_in(ctx, "layernorm", "module")
    second, b = run_in(ctx, "rmsnorm", "module")
    assert a["copy_reused"]["value"] == 0.0 and a["copy_time_median"]["copy_from"] == first.case_id
    assert b["copy_reused"]["value"] == 1.0 and b["copy_time_median"]["copy_from"] == first.case_id
    assert b["copy_time_median"]["value"] == a["copy_time_median"]["value"]  # the same samples
    assert "copy_faults_per_call" not in b  # the probe's fault counts stay with the case that timed it
    # the fraction is the second norm's own GB/s over the first case's probe
    assert b["copy_fraction"]["value"] == b["gbps"]["value"] / a["copy_gbps"]["value"]


def test_another_mode_or_shape_or_reuse_off_times_the_probe_again():
    ctx = RunContext(threads=1)
    run_in(ctx, "layernorm", "module")
    for params in ({"mode": "fwd+bwd"}, {"d": 64}, {"cache": "cold"}, {"copy_reuse": False}):
        case, m = run_in(ctx, "rmsnorm", "module", **params)
        assert m["copy_reused"]["value"] == 0.0, params
        assert m["copy_time_median"]["copy_from"] == case.case_id, params


def test_reused_probe_keeps_the_norms_rounds():
    """samples = 6 in 2 rounds: the norm re-warms between rounds whether or not the probe is timed, so both
    cases store all 6 samples."""
    ctx = RunContext(threads=1)
    for norm in ("layernorm", "rmsnorm"):
        case = make_case("latency", norm, "module", tokens=32, d=64, samples=6, accuracy_rows=0, memory=False)
        rows, status, error = run_one(case, ctx)
        assert status == "ok", error
        assert sum(r["metric"] == "time" for r in rows) == 6
