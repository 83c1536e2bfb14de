"""compare_runs gives what `normbench compare` prints (text, stderr lines, exit code), bad input refused."""

from __future__ import annotations

import pytest
from _compare_support import store_run

from normbench.analysis.compare.options import CompareOptions, CompareRunsOptions
from normbench.analysis.compare.runs import compare_runs
from normbench.core.errors import NormbenchError
from normbench.results import baselines
from normbench.results.store import RunStore


def test_a_regression_is_text_notes_and_exit_1(tmp_path):
    store_run(tmp_path, "20260101-base")
    store_run(tmp_path, "20260102-worse", rel_err={("rmsnorm", 0.0): [1e-9, 1e-9]})
    said = []
    answer = compare_runs("20260101-base", "20260102-worse", CompareRunsOptions(tmp_path), said.append)
    assert answer.exit_code == 1 and said == []
    assert (
        answer.text.startswith("REGRESSION: 1 regression(s)")
        and "20260101-base -> 20260102-worse" in answer.text
    )
    assert answer.notes == ["REGRESSION: 1 regression(s) (exit 1)"]

    csv = compare_runs(
        "20260101-base", "20260102-worse", CompareRunsOptions(tmp_path, fmt="csv"), said.append
    )
    assert csv.text.startswith("mark,meaning,bench,case,metric")  # the records alone on stdout
    assert csv.notes[0].startswith("REGRESSION") and csv.notes[-1] == "REGRESSION: 1 regression(s) (exit 1)"


def test_the_baseline_is_named_before_the_runs_are_read(tmp_path):
    store_run(tmp_path / "results", "20260101-base")
    baselines.save(RunStore.open(tmp_path / "results", "20260101-base"), tmp_path / "bl", say=lambda *a: None)
    said = []
    opts = CompareRunsOptions(tmp_path / "results", baseline=True, baselines=tmp_path / "bl")
    with pytest.raises(NormbenchError, match="on both sides"):
        compare_runs(None, None, opts, said.append)
    assert said and said[0].startswith("baseline: 20260101-base (machine ")


def test_the_options_check_themselves_when_made():
    with pytest.raises(NormbenchError, match="--format 'tsv'"):
        CompareRunsOptions(".", fmt="tsv")
    with pytest.raises(NormbenchError, match="--factor nan"):
        CompareOptions(factor=float("nan"))
    with pytest.raises(NormbenchError, match="--deterministic-only gates no time"):
        CompareOptions(deterministic_only=True, absolute=True)
