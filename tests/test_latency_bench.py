"""The latency bench end to end on the CPU: every norm (DyT included) in both modes, compiled variants with
their compile time kept apart, third-party kernels reported unavailable, CUDA cases skipped without a GPU,
CPU peak memory, suite validation of the new parameters, and the report's flags."""

from __future__ import annotations

import pytest
import torch
from latency_helpers import make_case, run

from normbench.core.errors import SuiteError
from normbench.suite.load import parse_suite

NORMS = [
    ("layernorm", "module"),
    ("rmsnorm", "functional"),
    ("batchnorm", "train"),
    ("batchnorm", "eval"),
    ("dyt", "module"),
    ("dyt", "functional"),
]


@pytest.mark.parametrize("norm, impl", NORMS)
@pytest.mark.parametrize("mode", ["fwd", "fwd+bwd"])
def test_case_reports_time_bandwidth_accuracy_memory(norm, impl, mode):
    m, _, status, error = run("latency", norm, impl, tokens=64, d=128, mode=mode)
    assert status == "ok", error
    for metric in (
        "time_median",
        "gbps",
        "copy_fraction",
        "err_ratio_max",
        "peak_mem",
        "first_call_s",
        "recheck_max_change",
    ):
        assert metric in m, metric
    assert m["accuracy_suspect"] == 0.0
    assert m["peak_mem"] >= 64 * 128 * 4  # at least the output


def test_cold_cache_case_times_one_call_per_sample():
    m, rows, status, error = run("latency", "rmsnorm", "module", tokens=64, d=128, cache="cold")
    assert status == "ok", error
    assert m["inner_loops"] == 1.0 and rows[0]["timer"].endswith("llc-flush")


def test_cpu_peak_memory_of_a_copy_is_its_output():
    m, _, status, error = run("latency", "identity", "copy", tokens=256, d=256, copy_probe=False)
    assert status == "ok", error
    assert m["peak_mem"] == 256 * 256 * 4


@pytest.mark.slow
def test_compiled_variant_matches_eager_and_keeps_compile_time_apart():
    """torch.compile on the CPU (Inductor's C++ backend): the first call compiles (compile_s), the timed
    calls do not, and the compiled kernel is as accurate as eager. Slow the first time (~20 s: Inductor
    and gcc), seconds once Inductor's on-disk cache is warm."""
    m, rows, status, error = run("latency", "rmsnorm", "compiled", tokens=64, d=128, mode="fwd")
    assert status == "ok", error
    assert m["compile_s"] == m["first_call_s"] and m["compile_s"] > 10 * m["time_median"]
    assert m["accuracy_suspect"] == 0.0
    # the same shape again reuses the graph: nothing new compiled
    again = run("latency", "rmsnorm", "compiled", tokens=64, d=128, mode="fwd", seed=1)[0]
    assert m["compile_graphs"] >= 1 and again["compile_graphs"] == 0


@pytest.mark.parametrize("impl", ["apex", "liger"])
def test_third_party_kernels_are_unavailable_with_the_import_error(impl):
    _, _, status, error = run("latency", "rmsnorm", impl, tokens=8, d=8)
    module = {"apex": "apex", "liger": "liger_kernel"}[impl]
    try:
        __import__(module)
    except ImportError:
        assert status == "unavailable" and "not importable" in error and module in error
    else:
        assert status == "skipped" and "CUDA only" in error  # installed, but this is a CPU case


@pytest.mark.skipif(torch.cuda.is_available(), reason="tests the machine without CUDA")
def test_cuda_case_is_skipped_without_a_gpu():
    _, _, status, error = run("latency", "layernorm", "module", tokens=8, d=8, device="cuda")
    assert status == "skipped" and "CUDA is not available" in error


def _suite(params: str) -> str:
    return f'name = "t"\n[[bench]]\nkind = "latency"\nnorms = ["dyt"]\n[bench.params]\ntokens = 8\nd = 8\n{params}\n'


def test_cuda_graph_on_cpu_is_a_validation_error():
    with pytest.raises(SuiteError, match=r"bench\[0\]\.params\.cuda_graph: CUDA graphs need device"):
        parse_suite(_suite("cuda_graph = true"))
    parse_suite(_suite('cuda_graph = true\ndevice = "cuda"'))  # valid (skipped at run time without CUDA)


@pytest.mark.parametrize(
    "bad, key",
    [('cache = "tepid"', "cache"), ('input = "uniform"', "input"), ("accuracy_rows = -1", "accuracy_rows")],
)
def test_bad_new_parameters_name_their_key(bad, key):
    with pytest.raises(SuiteError, match=rf"bench\[0\]\.params\.{key}"):
        parse_suite(_suite(bad))


def test_report_marks_bandwidth_above_the_copy_as_implausible():

    from normbench.benches.latency import Latency
    from normbench.core.tables import ReportOptions

    case = make_case("latency", "layernorm", "module", tokens=8, d=8)
    rows = [
        {"metric": "time_median", "value": 1e-6},
        {"metric": "time_iqr", "value": 0.0},
        {"metric": "gbps", "value": 30.0},
        {"metric": "copy_fraction", "value": 1.5},
    ]
    frame = _summary_frame(case, rows)
    tables = Latency().report(frame, ReportOptions(machine="test"))
    cell = tables[1].frame.loc[0, "layernorm:module"]
    assert cell.startswith("30.0 (150%") and "above copy" in cell


def test_report_times_follow_the_cases_statistic_even_when_it_is_constant():

    from normbench.benches.latency import Latency
    from normbench.core.tables import ReportOptions

    case = make_case("latency", "layernorm", "module", tokens=8, d=8, stat="min")
    rows = [
        {"metric": "time_median", "value": 2e-6},
        {"metric": "time_min", "value": 1e-6},
        {"metric": "time_iqr", "value": 0.0},
        {"metric": "gbps", "value": 1.0},
    ]
    frame = _summary_frame(case, rows)
    grid = Latency().report(frame, ReportOptions(machine="test"))[0]
    assert grid.title == "Latency: min time per call"
    assert grid.frame.loc[0, "layernorm:module (µs)"] == "1.00"  # the unit in the header (report units)


def _summary_frame(case, rows):
    """Stored summary rows of one ok layernorm:module case, as report() reads them."""
    import pandas as pd

    base = {**case.params, "case_id": "c", "norm": "layernorm", "impl": "module", "status": "ok"}
    return pd.DataFrame([{**base, "sample": None, "unit": "", **r} for r in rows])
