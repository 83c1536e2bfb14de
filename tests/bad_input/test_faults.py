"""Faults in real processes — kill -9 mid-run, SIGTERM, a truncated or foreign part, two resumes at once,
a file-size limit — each end, after `--resume`, with every planned case stored exactly once and readable."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from normbench.results.files import RunLock
from normbench.results.store import RunStore

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")]

# 12 cases of ~20 ms: long enough for a signal to land mid-run, short enough to stay cheap.
PARAMS = "[bench.params]\nsamples = 3\nwarmup_calls = 0\nmin_sample_s = 5e-3\ncopy_probe = false\n"


@pytest.fixture
def suite(tmp_path, tiny_suite):
    path = tmp_path / "faults.toml"
    path.write_text(tiny_suite(name="faults", sweep="tokens = [8]\nd = [16, 32]", params=PARAMS))
    return path


def start(suite, results, child_env, *args, preexec=None):
    return subprocess.Popen(
        [sys.executable, "-m", "normbench", "run", *map(str, args or [suite]), "--results", str(results)],
        cwd=suite.parent,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec,
    )


def wait_for_parts(proc, results, n=1, timeout=90.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(list(results.glob("*/parts/*.parquet"))) >= n:
            return
        if proc.poll() is not None:
            pytest.fail(f"run ended before {n} part(s) were written: {proc.communicate()}")
        time.sleep(0.002)
    proc.kill()
    pytest.fail("no part written in time")


def assert_complete(results, run_id):
    """Every planned case has one readable part, written by one session, with its 3 timed samples."""
    store = RunStore.open(results, run_id)
    planned = {c["case_id"] for c in store.manifest["cases"]}
    frame = store.read()  # verifies every part against the manifest
    by_case = frame.groupby("case_id")
    assert set(by_case.groups) == planned
    assert (by_case["session"].nunique() == 1).all()
    assert (by_case.apply(lambda g: int((g["metric"] == "time").sum()), include_groups=False) == 3).all()
    assert store.manifest["status"] == "complete"
    pids = [s["pid"] for s in store.manifest["sessions"]]
    assert len(pids) == len(set(pids)) and frame["session"].max() < len(pids)  # no session record lost
    return store


def test_kill_9_mid_run_then_resume(suite, tmp_path, cli, child_env):
    results = tmp_path / "results"
    proc = start(suite, results, child_env, suite, "--quiet")
    wait_for_parts(proc, results, 2)
    proc.kill()
    proc.wait(timeout=30)
    (run,) = results.iterdir()
    assert json.loads((run / "manifest.json").read_text())["status"] == "running"
    listed = cli("list", "runs", "--results", results)
    assert f"{run.name}" in listed.stdout and "interrupted" in listed.stdout  # its writer is gone

    resumed = cli("run", "--resume", run.name, "--quiet", "--results", results)
    assert resumed.exit_code == 0, resumed.output
    assert "which has ended; taking it over" in resumed.stderr
    assert_complete(results, run.name)
    assert not list(run.rglob("*.tmp"))  # the killed writer's temporary file is gone


def test_sigterm_stops_after_the_case_then_resume(suite, tmp_path, cli, child_env):
    results = tmp_path / "results"
    proc = start(suite, results, child_env, suite, "--quiet")
    wait_for_parts(proc, results)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr
    assert "SIGTERM: stopping after the current case" in stderr
    (run,) = results.iterdir()
    assert f"normbench run --resume {run.name}" in stderr
    assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"

    resumed = cli("run", "--resume", run.name, "--quiet", "--results", results)
    assert resumed.exit_code == 0, resumed.output
    assert_complete(results, run.name)


def test_truncated_and_foreign_parts_are_moved_aside_and_rerun(suite, tmp_path, cli, normbench_proc):
    results = tmp_path / "results"
    assert cli("run", suite, "--quiet", "--results", results).exit_code == 0
    (run,) = results.iterdir()
    truncated, foreign = sorted((run / "parts").glob("*.parquet"))[3:5]
    truncated.write_bytes(truncated.read_bytes()[: truncated.stat().st_size // 2])
    table = pq.read_table(foreign)  # a part of another run under a planned case's name
    column = table.column_names.index("run_id")
    pq.write_table(table.set_column(column, "run_id", pa.array(["another-run"] * table.num_rows)), foreign)
    report = cli("report", run.name, "--results", results)
    assert report.exit_code == 2 and truncated.name in report.stderr and "--resume" in report.stderr

    resumed = normbench_proc("run", "--resume", run.name, "--results", results)
    assert resumed.returncode == 0, resumed.stderr
    assert "2 of 12 cases to run" in resumed.stderr
    assert f"moved {truncated} aside" in resumed.stderr and "unreadable" in resumed.stderr
    assert f"moved {foreign} aside" in resumed.stderr and "belong to run another-run" in resumed.stderr
    assert sorted(p.name for p in (run / "rejected").iterdir()) == [truncated.name, foreign.name]  # kept
    store = assert_complete(results, run.name)
    rerun = store.read().groupby("case_id")["session"].first()
    assert set(rerun[rerun == 1].index) == {truncated.stem, foreign.stem}


def test_two_resumes_at_once_run_each_case_once(suite, tmp_path, cli, child_env):
    results = tmp_path / "results"
    assert cli("run", suite, "--quiet", "--results", results).exit_code == 0
    (run,) = results.iterdir()
    for part in sorted((run / "parts").glob("*.parquet"))[4:]:  # an interrupted run: 4 of 12 stored
        part.unlink()
    first = {p.stem for p in (run / "parts").glob("*.parquet")}

    both = [start(suite, results, child_env, "--resume", run.name, "--quiet") for _ in range(2)]
    outputs = [p.communicate(timeout=120) for p in both]
    codes = sorted(p.returncode for p in both)
    stderr = "".join(err for _, err in outputs)
    assert "Traceback" not in stderr
    if codes == [0, 2]:  # the usual race: the second writer is refused, naming the first's pid
        winner = next(p for p in both if p.returncode == 0)
        assert f"run {run.name} is being written by pid {winner.pid}" in stderr
    else:  # the first finished before the second started: it found nothing left to run
        assert codes == [0, 0] and "0 of 12 cases to run" in stderr
    store = assert_complete(results, run.name)
    sessions = store.read().groupby("case_id")["session"].first()
    assert set(sessions[sessions == 0].index) == first
    counts = [s["cases"] for s in store.manifest["sessions"]]
    assert counts == ([12, 12 - len(first)] if codes == [0, 2] else [12, 12 - len(first), 0])
    print("concurrent resume codes:", codes)


def test_a_second_writer_is_refused_while_the_lock_is_held(suite, tmp_path, cli):
    results = tmp_path / "results"
    assert cli("run", suite, "--quiet", "--only", "d=16", "--results", results).exit_code == 0
    (run,) = results.iterdir()
    with RunLock(run, run.name):
        refused = cli("run", "--resume", run.name, "--results", results)
    assert refused.exit_code == 2
    assert f"error: run {run.name} is being written by pid {os.getpid()}" in refused.stderr


def test_a_file_size_limit_stops_the_run_cleanly(suite, tmp_path, cli, child_env):
    """`ulimit -f`: the first part does not fit; one line, exit 2, the run marked interrupted, and
    --resume (without the limit) finishes it."""
    results = tmp_path / "results"

    def limit():
        # the manifest (~9 KB, and growing with the env it records) fits; a part (~26 KB) does not
        resource.setrlimit(resource.RLIMIT_FSIZE, (16000, 16000))

    proc = start(suite, results, child_env, suite, "--quiet", preexec=limit)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 2, stderr
    assert "Traceback" not in stderr
    (run,) = results.iterdir()
    assert f"error: cannot write {run / 'parts'}: File too large; 0 cases stored; " in stderr
    assert f"`normbench run --resume {run.name} --results {results}` finishes" in stderr
    assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"

    resumed = cli("run", "--resume", run.name, "--quiet", "--results", results)
    assert resumed.exit_code == 0, resumed.output
    assert_complete(results, run.name)


def test_escape_sequences_in_a_failure_are_printed_escaped(tmp_path, normbench_proc, tiny_suite):
    (tmp_path / "h.toml").write_text(tiny_suite(norms='["hostile"]'))
    proc = normbench_proc(
        "run", "h.toml", "--results", "results", extra_env={"NORMBENCH_PLUGINS": "normbench_hostile_norms"}
    )
    assert proc.returncode == 1, proc.stderr
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr
    assert "failed: latency hostile:raises tokens=8 d=16: ValueError: \\x1b[2J\\x1b[31mscreen" in proc.stderr
    assert "[/] [bold]markup\\x1b]0;title\\x07" in proc.stderr


def test_a_plain_keyboard_interrupt_after_a_sigterm_keeps_the_sigterm():
    """Ray turns the StopNow our handler raises into a plain KeyboardInterrupt (its signal check returns an
    "interrupted" status and raises anew): the guard still names SIGTERM, so the run exits 143, not 130."""
    from normbench.runner import StopAfterCase

    with pytest.raises(KeyboardInterrupt) as caught, StopAfterCase(lambda _: None) as stop:
        os.kill(os.getpid(), signal.SIGTERM)  # the first: a stop is requested
        assert stop.requested
        raise KeyboardInterrupt  # what Ray raises in place of the second signal's StopNow
    assert caught.value.signal == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) != stop._handle  # the handlers are restored
