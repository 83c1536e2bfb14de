"""A run interrupted by Ctrl-C keeps every finished case and `run --resume` finishes it: each case stored once, none run twice."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from normbench.results.store import RunStore
from normbench.suite.expand import expand
from normbench.suite.load import load_suite

# 24 cases of ~20 ms each: long enough that the interrupt lands mid-run, short enough to finish quickly.
PARAMS = "[bench.params]\nsamples = 3\nwarmup_calls = 0\nmin_sample_s = 5e-3\ncopy_probe = false\n"


def _wait_for_first_part(proc, results, timeout=90.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if list(results.glob("*/parts/*.parquet")):
            return
        if proc.poll() is not None:
            pytest.fail(f"run ended before any part was written: {proc.communicate()}")
        time.sleep(0.002)
    proc.kill()
    pytest.fail("no part written in time")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_interrupted_run_resumes_without_running_a_case_twice(tmp_path, tiny_suite, cli, child_env):
    suite = tmp_path / "resume.toml"
    suite.write_text(tiny_suite(name="resume", sweep="tokens = [8]\nd = [16, 32, 64, 128]", params=PARAMS))
    all_ids = {c.case_id for c in expand(load_suite(suite))}
    assert len(all_ids) == 24
    results = tmp_path / "results"

    proc = subprocess.Popen(
        [sys.executable, "-m", "normbench", "run", str(suite), "--quiet", "--results", str(results)],
        cwd=tmp_path,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for_first_part(proc, results)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=90)

    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupt: stopping after the current case" in stderr
    (run_dir,) = results.iterdir()
    run_id = run_dir.name
    assert f"normbench run --resume {run_id}" in stderr
    parts = sorted((run_dir / "parts").iterdir())
    assert all(p.suffix == ".parquet" for p in parts)  # no half-written temporary part
    first = {p.stem for p in parts}
    assert 0 < len(first) < len(all_ids) and first <= all_ids
    for part in parts:  # every finished part is whole and readable
        assert set(pq.read_table(part).column("status").to_pylist()) == {"ok"}
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and len(manifest["sessions"]) == 1

    resumed = cli("run", "--resume", run_id, "--quiet", "--results", results)
    assert resumed.exit_code == 0, resumed.output

    frame = RunStore.open(results, run_id).read()
    by_case = frame.groupby("case_id")
    assert set(by_case.groups) == all_ids  # every case stored
    assert (by_case["session"].nunique() == 1).all()  # each case written by one invocation
    assert (
        by_case.apply(lambda g: int((g["metric"] == "time").sum()), include_groups=False) == 3
    ).all()  # once each
    session = by_case["session"].first()
    assert set(session[session == 0].index) == first  # the first invocation's cases were not rerun
    assert set(session[session == 1].index) == all_ids - first  # the resume ran exactly the rest
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert [s["cases"] for s in manifest["sessions"]] == [24, 24 - len(first)]


def test_resume_keeps_the_runs_shard_and_reruns_only_missing_cases(cli, tmp_path, tiny_suite):
    suite = tmp_path / "shard.toml"
    suite.write_text(tiny_suite(sweep="tokens = [8]\nd = [16, 32]"))
    results = tmp_path / "results"
    assert cli("run", suite, "--shard", "2/3", "--quiet", "--results", results).exit_code == 0
    (run_dir,) = results.iterdir()
    shard_ids = {p.stem for p in (run_dir / "parts").glob("*.parquet")}
    assert len(shard_ids) == 4  # cases 2, 5, 8, 11 of 12
    lost = sorted(shard_ids)[0]
    (run_dir / "parts" / f"{lost}.parquet").unlink()

    result = cli("run", "--resume", run_dir.name, "--results", results)
    assert result.exit_code == 0, result.output
    assert "1 of 4 cases to run" in result.stderr
    frame = RunStore.open(results, "latest").read()
    session = frame.groupby("case_id")["session"].first()
    assert set(session.index) == shard_ids
    assert set(session[session == 1].index) == {lost}


def test_resume_refuses_a_new_selection(cli, tmp_path, tiny_run):
    results, run_id = tiny_run
    result = cli("run", "--resume", run_id, "--only", "rmsnorm", "--results", results)
    assert result.exit_code == 2
    assert (
        result.stderr.splitlines()[0]
        == "error: --resume keeps the run's own --shard/--only; do not give them again"
    )


def test_resume_of_a_complete_run_runs_nothing(cli, tmp_path, tiny_suite):
    suite = tmp_path / "done.toml"
    suite.write_text(tiny_suite(norms='["identity"]'))
    results = tmp_path / "results"
    assert cli("run", suite, "--quiet", "--results", results).exit_code == 0
    result = cli("run", "--resume", "latest", "--results", results)
    assert result.exit_code == 0
    assert "0 of 1 cases to run" in result.stderr and "nothing run" in result.stderr
