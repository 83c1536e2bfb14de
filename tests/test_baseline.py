"""Baselines per machine: `baseline save` keeps a run under baselines/<fingerprint>/<suite>/ (hostname not in
the fingerprint), `compare --baseline` finds it for the new run's machine and suite, saving again replaces
it, and bad input (no baseline, another suite's baseline, a bad run id) is one line, exit 2, nothing written."""

from __future__ import annotations

import json
import shutil

import pytest
from _compare_support import ENV, store_run
from typer.testing import CliRunner

from normbench.cli import app
from normbench.results.baselines import machine_fingerprint


def _cli(*args):
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def dirs(tmp_path):
    return tmp_path / "results", tmp_path / "baselines"


def test_fingerprint_ignores_the_hostname_and_names_the_machine():
    fp = machine_fingerprint(ENV)
    assert fp == machine_fingerprint({**ENV, "hostname": "another-runner"})
    assert fp != machine_fingerprint({**ENV, "cpu_flags": ["avx2"]})
    assert fp != machine_fingerprint({**ENV, "torch": "2.14.0"}) and fp.startswith(
        "amd-epyc-7763-2c-torch2.13.0-"
    )


def test_save_then_compare_the_latest_run_with_it(dirs):
    results, baselines = dirs
    store_run(results, "20260101-a")
    saved = _cli(
        "baseline", "save", "20260101-a", "-r", str(results), "--baselines", str(baselines), "-f", "json"
    )
    assert saved.exit_code == 0, saved.output
    info = json.loads(saved.stdout)
    fp = machine_fingerprint(ENV)
    assert info["fingerprint"] == fp and (baselines / fp / "gate" / "20260101-a" / "manifest.json").is_file()
    store_run(
        results, "20260102-b", env={**ENV, "hostname": "fresh"}, rel_err={("layernorm", 3.0): [4.4e-16, 1e-9]}
    )
    result = _cli("compare", "--baseline", "-r", str(results), "--baselines", str(baselines), "-f", "json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["base"] == ["baseline 20260101-a"] and data["new"] == ["20260102-b"]
    assert f"baseline: 20260101-a (machine {fp}, suite gate)" in result.stderr
    # the better run becomes the baseline: saving again replaces the old one
    assert (
        _cli("baseline", "save", "latest", "-r", str(results), "--baselines", str(baselines)).exit_code == 0
    )
    assert sorted(p.name for p in (baselines / fp / "gate").iterdir()) == ["20260102-b"]
    listed = json.loads(_cli("baseline", "list", "--baselines", str(baselines), "-f", "json").stdout)
    assert [(b["fingerprint"], b["suite"], b["run_id"]) for b in listed] == [(fp, "gate", "20260102-b")]
    shown = _cli("baseline", "show", "20260102-b", "-r", str(results), "--baselines", str(baselines))
    assert (
        f"machine fingerprint of run 20260102-b: {fp}" in shown.stdout
        and "baseline of gate: 20260102-b" in shown.stdout
    )


def _one_error(result) -> str:
    assert result.exit_code == 2, result.output
    errors = [s for s in result.stderr.splitlines() if s.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    return errors[0]


def test_no_baseline_for_this_machine(dirs):
    results, baselines = dirs
    store_run(results, "a")
    line = _one_error(_cli("compare", "--baseline", "a", "-r", str(results), "--baselines", str(baselines)))
    assert "no baseline of suite 'gate' for machine" in line and "baseline save" in line
    assert not baselines.exists()


def test_a_baseline_of_another_suite(dirs):
    results, baselines = dirs
    store_run(results, "a", suite="other")
    assert _cli("baseline", "save", "a", "-r", str(results), "--baselines", str(baselines)).exit_code == 0
    fp = machine_fingerprint(ENV)
    shutil.copytree(
        baselines / fp / "other", baselines / fp / "gate"
    )  # a cache put back under the wrong name
    store_run(results, "b")
    line = _one_error(_cli("compare", "--baseline", "b", "-r", str(results), "--baselines", str(baselines)))
    assert "a baseline of suite 'other', not 'gate'" in line


@pytest.mark.parametrize("bad", ["../a", "a/b", "a\x1b[2Jb", "..", ".hidden"])
def test_a_bad_run_id_writes_nothing(dirs, bad):
    results, baselines = dirs
    store_run(results, "a")
    line = _one_error(_cli("baseline", "save", bad, "-r", str(results), "--baselines", str(baselines)))
    assert "is not a run id" in line and "\x1b" not in line
    assert not baselines.exists()


def test_unknown_action_and_missing_run(dirs):
    results, baselines = dirs
    assert "one of save, list, show" in _one_error(_cli("baseline", "keep", "--baselines", str(baselines)))
    assert "needs a RUN" in _one_error(_cli("baseline", "save", "--baselines", str(baselines)))
    assert "no run 'nope'" in _one_error(
        _cli("baseline", "save", "nope", "-r", str(results), "--baselines", str(baselines))
    )
    assert not baselines.exists()


def test_any_machine_falls_back_to_another_machines_baseline(dirs):
    """A hosted runner with a new CPU: its timings cannot compare, but its deterministic values still do."""
    results, baselines = dirs
    store_run(results, "a", latency={"module": 1e-5})
    assert _cli("baseline", "save", "a", "-r", str(results), "--baselines", str(baselines)).exit_code == 0
    store_run(results, "b", env={**ENV, "cpu": "Intel Xeon"}, latency={"module": 1e-5})
    args = ["compare", "--baseline", "b", "-r", str(results), "--baselines", str(baselines), "-f", "json"]
    assert "no baseline of suite 'gate'" in _one_error(_cli(*args))
    result = _cli(*args, "--any-machine")
    data = json.loads(result.stdout)
    assert result.exit_code == 3 and "another machine than this run's" in result.stderr
    assert data["counts"]["="] == 4 and [x["metric"] for x in data["not_compared"]] == ["time_vs_ref"]
    assert "environment differs: cpu: AMD EPYC 7763 -> Intel Xeon" in data["not_compared"][0]["reason"]


def test_cpu_flags_as_a_string_or_a_list_give_one_fingerprint():
    assert machine_fingerprint({**ENV, "cpu_flags": "avx512f avx2"}) == machine_fingerprint(ENV)
