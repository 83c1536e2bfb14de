"""Accuracy as numbers: errors against float64 for outputs and every gradient, the ratio to PyTorch's own
eager error, and deliberately wrong implementations (registered in tests only) caught by the ratio and by
the re-check after timing, in-process and through NORMBENCH_PLUGINS."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from latency_helpers import per_tensor, run

from normbench.norms import registry

HERE = Path(__file__).resolve().parent


@pytest.fixture
def broken_norm():
    """layernorm_broken registered for one test, then removed so no other test sees it."""
    import latency_broken_norms

    registry.NORMS.add("layernorm_broken", latency_broken_norms.BrokenLayerNorm())
    yield "layernorm_broken"
    registry.NORMS.remove("layernorm_broken")


def test_wrong_variance_is_flagged_by_the_ratio(broken_norm):
    m, rows, status, error = run("latency", broken_norm, "unbiased", tokens=64, d=128, mode="fwd")
    assert status == "ok", error
    ratio = per_tensor(rows, "err_ratio")["y"]
    assert ratio > 2 and m["accuracy_suspect"] == 1.0
    # the same norm's correct implementation, on the same input, is not suspect
    m_ok, _, _, _ = run("latency", broken_norm, "functional", tokens=64, d=128, mode="fwd")
    assert m_ok["accuracy_suspect"] == 0.0 and m_ok["err_ratio_max"] <= 2


def test_output_that_changes_during_timing_fails_the_case(broken_norm):
    # 20 samples: the timing loop makes more than the 10 calls the implementation gets right
    _, _, status, error = run("latency", broken_norm, "drifting", tokens=32, d=64, mode="fwd", samples=20)
    assert status == "failed" and "after the timing loop" in error


def test_eager_implementation_has_ratio_one_and_every_gradient_is_compared():
    m, rows, status, error = run("latency", "layernorm", "module", tokens=64, d=96, mode="fwd+bwd")
    assert status == "ok", error
    ratios = per_tensor(rows, "err_ratio")
    assert set(ratios) == {"y", "dx", "dweight", "dbias"}
    assert all(r == pytest.approx(1.0) for r in ratios.values())
    errs = per_tensor(rows, "err_abs")
    assert 0 < errs["y"] < 1e-5 and 0 < errs["dx"] < 1e-4  # fp32 against float64


@pytest.mark.parametrize(
    "norm, impl", [("dyt", "functional"), ("batchnorm", "eval"), ("rmsnorm", "composite")]
)
@pytest.mark.parametrize("dist", ["shifted", "lowvar"])
def test_hard_inputs_give_finite_small_errors(norm, impl, dist):
    m, rows, status, error = run("latency", norm, impl, tokens=64, d=64, mode="fwd+bwd", input=dist)
    assert status == "ok", error
    errs = per_tensor(rows, "err_abs")
    assert errs and all(0 <= e < 1e-2 for e in errs.values())


def test_bf16_errors_are_bf16_sized_and_compared_with_bf16_eager():
    _, rows, status, error = run("latency", "rmsnorm", "functional", tokens=64, d=256, dtype="bf16")
    assert status == "ok", error
    y_err, eager = per_tensor(rows, "err_abs")["y"], per_tensor(rows, "eager_err_abs")["y"]
    assert 1e-4 < y_err < 0.1 and 1e-4 < eager < 0.1


def test_plugin_norm_is_flagged_in_the_report(tmp_path):
    """End to end: NORMBENCH_PLUGINS registers the broken norm in a `normbench run` subprocess, and the
    report marks it SUSPECT while the correct implementation stays ok."""
    suite = tmp_path / "broken.toml"
    suite.write_text(
        'name = "broken"\n[[bench]]\nkind = "latency"\nnorms = ["layernorm_broken:unbiased", '
        '"layernorm_broken:module"]\n[bench.sweep]\ntokens = [32]\nd = [64]\n'
        "[bench.params]\nsamples = 3\nwarmup_calls = 1\nmemory = false\n"
    )
    env = {
        **os.environ,
        "NORMBENCH_PLUGINS": "latency_broken_norms",
        "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent), os.environ.get("PYTHONPATH", "")]),
    }
    base = [sys.executable, "-m", "normbench"]
    done = subprocess.run(
        base + ["run", str(suite), "--results", str(tmp_path), "--quiet", "--threads", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = subprocess.run(
        base + ["report", "latest", "--full", "--results", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    accuracy = report[report.index("Accuracy vs float64") :]
    lines = {
        cell.strip(): line
        for line in accuracy.splitlines()
        for cell in line.split("|")
        if cell.strip().startswith("layernorm_broken:")
    }
    assert "SUSPECT" in lines["layernorm_broken:unbiased"]
    assert "SUSPECT" not in lines["layernorm_broken:module"]
