"""Run naming: `run` prints only the run id on stdout, --run-id and --tag name a run (a bad or taken name is
one line, exit 2, nothing written), `latest:SUITE` picks the newest run of one suite, `list runs --format
json` describes runs as data, and normbench.load takes a run folder's path."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import make_child_env, tiny_latency_suite

import normbench
from normbench.core.errors import NormbenchError


def _suite(write_suite, name: str):
    return write_suite(tiny_latency_suite(name=name, norms='["identity"]'), f"{name}.toml")


def test_quiet_run_prints_only_its_id_on_stdout(write_suite, tmp_path):
    """What `RUN=$(normbench run quick --quiet)` captures, in a real process."""
    suite = _suite(write_suite, "alpha")
    done = subprocess.run(
        [sys.executable, "-m", "normbench", "run", str(suite), "--quiet", "--results", "res"],
        cwd=tmp_path,
        env=make_child_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "res").iterdir()
    assert done.stdout == f"{folder.name}\n"
    assert f"run {folder.name}: 1 ok" in done.stderr


def test_run_id_names_the_run_and_the_id_ends_stdout(cli, write_suite, tmp_path):
    result = cli("run", _suite(write_suite, "alpha"), "--run-id", "pr-17", "--results", tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "pr-17"
    manifest = json.loads((tmp_path / "r" / "pr-17" / "manifest.json").read_text())
    assert manifest["run_id"] == "pr-17" and "tag" not in manifest


def test_tag_goes_into_the_id_and_the_manifest(cli, write_suite, tmp_path):
    result = cli("run", _suite(write_suite, "alpha"), "--tag", "main", "--quiet", "--results", tmp_path / "r")
    assert result.exit_code == 0, result.output
    run_id = result.stdout.strip()
    assert run_id.split("-")[2:4] == ["alpha", "main"]
    assert json.loads((tmp_path / "r" / run_id / "manifest.json").read_text())["tag"] == "main"


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--run-id", "a/b", "error: --run-id 'a/b': it names a folder under --results"),
        ("--run-id", "..", "error: --run-id '..': it names a folder under --results"),
        ("--run-id", "a\\b", "error: --run-id 'a\\b': it names a folder under --results"),
        ("--run-id", "x\x1b[31m", "error: --run-id 'x\\x1b[31m': it names a folder under --results"),
        ("--run-id", ".hidden", "error: --run-id '.hidden': it names a folder under --results"),
        ("--run-id", "latest", "error: --run-id 'latest': reserved (it means the newest run)"),
        ("--run-id", "x" * 201, "error: --run-id: 201 bytes; at most 200"),
        ("--tag", "a/b", "error: --tag 'a/b': it names a folder under --results"),
        ("--tag", "t\n2", "error: --tag 't\\x0a2': it names a folder under --results"),
        ("--tag", "latest:x", "error: --tag 'latest:x': it names a folder under --results"),
    ],
)
def test_a_bad_name_is_one_line_exit_2_and_nothing_written(
    cli, write_suite, tmp_path, option, value, message
):
    suite = _suite(write_suite, "alpha")
    result = cli("run", suite, option, value, "--results", tmp_path / "r")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0].startswith(message), result.stderr
    assert len(result.stderr.splitlines()) == 2 and result.stdout == ""
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_a_taken_run_id_is_refused_and_the_run_untouched(cli, write_suite, tmp_path):
    suite = _suite(write_suite, "alpha")
    assert cli("run", suite, "--run-id", "same", "--results", tmp_path / "r").exit_code == 0
    before = sorted(p.relative_to(tmp_path) for p in (tmp_path / "r").rglob("*"))
    again = cli("run", suite, "--run-id", "same", "--results", tmp_path / "r")
    assert again.exit_code == 2 and again.stderr.startswith(
        f"error: --run-id 'same': {tmp_path / 'r' / 'same'} exists"
    )
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "r").rglob("*")) == before
    resumed = cli("run", "--resume", "same", "--run-id", "other", "--results", tmp_path / "r")
    assert resumed.exit_code == 2 and "--resume finishes one under its own id" in resumed.stderr


@pytest.fixture
def two_suites(cli, write_suite, tmp_path):
    """results with runs alpha (1), beta, alpha (2), beta in that order: (results, ids in order)."""
    results = tmp_path / "r"
    ids = []
    for name in ("alpha", "beta", "alpha", "beta"):
        done = cli("run", _suite(write_suite, name), "--quiet", "--results", results)
        assert done.exit_code == 0, done.output
        ids.append(done.stdout.strip())
    return results, ids


def test_latest_of_a_suite_is_its_newest_run(two_suites):
    results, ids = two_suites
    assert set(normbench.load("latest:alpha", results).run_id) == {ids[2]}
    assert set(normbench.load("latest:beta", results).run_id) == {ids[3]}
    assert set(normbench.load("latest", results).run_id) == {ids[3]}
    with pytest.raises(
        NormbenchError, match=r"latest:gamma: no run of suite 'gamma' .*suites with runs: alpha, beta"
    ):
        normbench.load("latest:gamma", results)


def test_latest_of_a_suite_works_on_the_command_line(cli, two_suites, tmp_path):
    results, ids = two_suites
    out = tmp_path / "rows.csv"
    done = cli("export", "latest:alpha", "-o", out, "--results", results)
    assert done.exit_code == 0, done.output
    assert f"from {ids[2]}" in done.stderr


def test_list_runs_json_is_one_object_per_run(cli, two_suites):
    results, ids = two_suites
    (results / "broken").mkdir()
    (results / "broken" / "manifest.json").write_text("{")
    done = cli("list", "runs", "--format", "json", "--results", results)
    assert done.exit_code == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["run_id"] for r in rows] == ["broken", *ids]
    assert rows[0]["status"] == "damaged" and "unreadable manifest" in rows[0]["error"]
    first = rows[1]
    assert (first["suite"], first["status"], first["cases_done"], first["cases_planned"]) == (
        "alpha",
        "complete",
        1,
        1,
    )
    assert first["tag"] is None and first["path"] == str(results / ids[0])


def test_list_json_is_for_runs_only(cli):
    done = cli("list", "norms", "--format", "json")
    assert done.exit_code == 2 and "normbench list runs --format json" in done.stderr


def test_load_takes_a_run_folder_path(tiny_run, monkeypatch, tmp_path):
    results, run_id = tiny_run
    by_id = normbench.load(run_id, results)
    monkeypatch.chdir(tmp_path)  # no results/ here: the paths alone find the run
    by_path = normbench.load(results / run_id)
    by_text = normbench.load(str(results / run_id) + os.sep)
    assert by_path.equals(by_id) and by_text.equals(by_id) and len(by_id) > 0
    both = normbench.load([results / run_id, str(results / run_id)])
    assert len(both) == 2 * len(by_id)
    with pytest.raises(NormbenchError, match="no run 'nowhere'"):
        normbench.load(tmp_path / "nowhere")
