"""Empty and degenerate settings: an empty or blank NORMBENCH_* variable is unset (runs land in ./results,
baselines in ./baselines, the case cap is its default), a bad number there is one line; a terminal that reports
0 columns changes no machine format and leaves the tables readable; a suite name of dots still makes a run id."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_child_env, tiny_latency_suite


def _normbench(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "normbench", *args],
        cwd=cwd,
        env=make_child_env(**env),
        capture_output=True,
        text=True,
        timeout=900,  # a loaded shared machine: a tiny run has taken minutes
    )


def _suite(tmp_path: Path, name: str = "tiny") -> Path:
    path = tmp_path / "s.toml"
    path.write_text("threads = 1\n" + tiny_latency_suite(name=name, norms='["layernorm:module"]'))
    return path


@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_results_variable_means_the_default_folder(tmp_path, value):
    _suite(tmp_path)
    done = _normbench(tmp_path, "run", "s.toml", "--quiet", NORMBENCH_RESULTS=value)
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.strip().splitlines()[-1]
    assert (tmp_path / "results" / run_id / "manifest.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results", "s.toml"]  # nothing loose in cwd
    listed = _normbench(tmp_path, "list", "runs", "--format", "json", NORMBENCH_RESULTS=value)
    assert [r["run_id"] for r in json.loads(listed.stdout)] == [run_id]


def test_an_empty_baselines_variable_means_the_default_folder(tiny_run, tmp_path):
    results, run_id = tiny_run
    shutil.copytree(results / run_id, tmp_path / "results" / run_id)
    done = _normbench(tmp_path, "baseline", "save", run_id, NORMBENCH_BASELINES="", NORMBENCH_RESULTS="")
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "baselines").glob(f"*/*/{run_id}/manifest.json"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baselines", "results"]


def test_an_empty_case_cap_is_its_default_and_a_bad_one_is_one_line(tmp_path):
    _suite(tmp_path)
    assert _normbench(tmp_path, "validate", "s.toml", NORMBENCH_MAX_CASES="").returncode == 0
    bad = _normbench(tmp_path, "validate", "s.toml", NORMBENCH_MAX_CASES="many")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "error: NORMBENCH_MAX_CASES='many': expected an integer > 0" in bad.stderr


def test_zero_columns_changes_no_machine_format_and_no_table(tiny_run, tmp_path):
    shared, run_id = tiny_run
    results = tmp_path / "results"
    shutil.copytree(shared, results)  # a second run beside it: compare refuses a run against itself
    again = _normbench(tmp_path, "run", str(shared.parent / "tiny.toml"), "--quiet", "-r", str(results))
    assert again.returncode == 0, again.stderr
    second = again.stdout.strip().splitlines()[-1]
    wide = {"COLUMNS": "120"}
    for args in (
        ["report", run_id, "-f", "json"],
        ["report", run_id, "-f", "csv"],
        ["compare", run_id, second, "-f", "json", "--allow-load"],
        ["list", "runs", "--format", "json"],
        ["report", run_id],
    ):
        zero = _normbench(tmp_path, *args, "-r", str(results), COLUMNS="0", LINES="0")
        # compare's verdict on two 3-sample runs is whatever the machine gave; its output is the point here
        assert zero.returncode in ((0, 1, 3) if args[0] == "compare" else (0,)), zero.stderr
        assert zero.stdout.strip(), f"{' '.join(args)}: nothing printed at COLUMNS=0"
        if args[-1] in ("json", "csv"):
            assert zero.stdout == _normbench(tmp_path, *args, "-r", str(results), **wide).stdout
        if args[-1] == "json":
            json.loads(zero.stdout)


def test_a_suite_named_with_dots_still_makes_a_run_id(tmp_path):
    _suite(tmp_path, name="v1..2 ..")
    done = _normbench(tmp_path, "run", "s.toml", "--quiet")
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.strip().splitlines()[-1]
    assert "-v1.2-" in run_id and ".." not in run_id
