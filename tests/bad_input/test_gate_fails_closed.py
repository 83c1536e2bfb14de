"""The gate cannot be switched off or fooled: a 10x slowdown in a case whose samples are too few for the
Mann-Whitney test to reach --alpha is undetectable (exit 3), never a pass; numbers that would disable the test
(--alpha 0, -1, nan; --factor 1, inf) are bad input; NaN or inf in a compared value is a regression (new) or
not comparable (base), never `~`."""

from __future__ import annotations

import json
import math

import pytest
from _compare_support import ENV, store_run
from _stores import create_store
from typer.testing import CliRunner

from normbench.cli import app
from normbench.core.case import Case, case_id

PARAMS = {"tokens": 64, "d": 256, "dtype": "fp32", "mode": "fwd", "device": "cpu"}


def _latency_run(root, run_id: str, medians: dict[str, float], samples: int) -> None:
    """One latency case per impl with `samples` raw times tightly around its median."""
    store = create_store(root, {"run_id": run_id, "started": run_id, "env": ENV, "suite": "gate"})
    for impl, median in medians.items():
        case = Case("latency", "layernorm", impl, PARAMS, 0, case_id("latency", "layernorm", impl, PARAMS))
        rows = [
            {"metric": "time", "unit": "s", "value": median * (1 + (i - samples / 2) / 400), "sample": i}
            for i in range(samples)
        ]
        store.write_case(case, rows, "ok", None)


def _compare(root, *args):
    # --absolute: these runs store raw times only (no paired ratios), which compare gates under it
    return CliRunner().invoke(
        app, ["compare", "base", "new", "--results", str(root), "--format", "json", "--absolute", *args]
    )


@pytest.mark.parametrize("samples", [5, 6])
def test_a_10x_slowdown_with_too_few_samples_is_undetectable_not_a_pass(tmp_path, samples):
    _latency_run(tmp_path, "base", {"module": 1e-5, "functional": 1e-5}, samples)
    _latency_run(tmp_path, "new", {"module": 1e-5, "functional": 1e-4}, samples)  # functional 10x slower
    result = _compare(tmp_path)
    assert result.exit_code == 3, result.output
    data = json.loads(result.stdout)
    assert data["verdict"].startswith("INCONCLUSIVE") and data["exit_code"] == 3
    (slow,) = [r for r in data["records"] if "functional" in r["case"]]
    assert slow["mark"] == "x" and slow["ratio"] == pytest.approx(10, rel=0.01)
    assert (
        f"undetectable: n={samples} vs {samples} samples, no Mann-Whitney test reaches p < 0.002"
        in slow["note"]
    )
    assert any("where no test can reach --alpha 0.002" in u for u in data["undetectable"])
    assert any("7 samples per side can reach it" in n for n in data["notes"])


def test_with_enough_samples_the_same_slowdown_is_a_regression(tmp_path):
    _latency_run(tmp_path, "base", {"module": 1e-5, "functional": 1e-5}, 7)
    _latency_run(tmp_path, "new", {"module": 1e-5, "functional": 1e-4}, 7)
    result = _compare(tmp_path)
    assert result.exit_code == 1, result.output
    marks = {r["case"].split()[0]: r["mark"] for r in json.loads(result.stdout)["records"]}
    assert marks == {"layernorm:module": "=", "layernorm:functional": "+"}


@pytest.mark.parametrize(
    ("option", "value", "wanted"),
    [
        ("--alpha", "0", "> 0 and < 1"),
        ("--alpha", "-1", "> 0 and < 1"),
        ("--alpha", "nan", "> 0 and < 1"),
        ("--alpha", "inf", "> 0 and < 1"),
        ("--factor", "1", "> 1"),
        ("--factor", "nan", "> 1"),
        ("--factor", "inf", "> 1"),
    ],
)
def test_numbers_that_switch_the_gate_off_are_bad_input(tmp_path, option, value, wanted):
    _latency_run(tmp_path, "base", {"module": 1e-5}, 12)
    _latency_run(tmp_path, "new", {"module": 1e-4}, 12)  # a 10x regression these values would pass
    result = _compare(tmp_path, option, value)
    assert result.exit_code == 2, result.output
    assert (
        result.stderr.splitlines()[0]
        == f"error: {option} {float(value)!r}: expected a finite number {wanted}"
    )
    assert result.stdout == "" and "Traceback" not in result.output


def test_the_options_refuse_those_numbers_from_the_api_too():
    from normbench.analysis.compare.options import CompareOptions
    from normbench.core.errors import NormbenchError

    for kwargs in ({"alpha": 0.0}, {"alpha": math.nan}, {"factor": 1.0}, {"factor": math.inf}):
        with pytest.raises(NormbenchError):
            CompareOptions(**kwargs)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_non_finite_deterministic_value_in_the_new_run_is_a_regression(tmp_path, bad):
    store_run(tmp_path, "base")
    store_run(tmp_path, "new", rel_err={("layernorm", 3.0): [4.4e-16, bad]})  # status stays ok
    result = _compare(tmp_path)
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    (reg,) = data["regressions"]
    assert reg["metric"] == "rel_err" and "new has 1 of 2 values not finite (nan or inf)" in reg["reason"]
    assert '"NaN"' not in result.stdout and "Infinity" not in result.stdout


def test_a_non_finite_value_in_the_base_is_not_comparable(tmp_path):
    store_run(tmp_path, "base", rel_err={("layernorm", 3.0): [math.nan, 3.1e-16]})
    store_run(tmp_path, "new")
    result = _compare(tmp_path)
    assert result.exit_code == 3, result.output
    (x,) = json.loads(result.stdout)["not_compared"]
    assert x["metric"] == "rel_err" and "base has 1 of 2 values not finite" in x["reason"]


def test_times_without_paired_ratios_are_not_a_pass_without_absolute(tmp_path):
    # runs stored before paired rounds (raw times only): compare gates the ratios, which they lack
    _latency_run(tmp_path, "base", {"module": 1e-5}, 7)
    _latency_run(tmp_path, "new", {"module": 1e-4}, 7)
    result = CliRunner().invoke(
        app, ["compare", "base", "new", "--results", str(tmp_path), "--format", "json"]
    )
    assert result.exit_code == 3, result.output
    (record,) = json.loads(result.stdout)["records"]
    assert record["mark"] == "x" and "--absolute compares its time" in record["note"]
