"""Fresh worker processes (timing/fresh.py): one given its plan at once and one started ahead give the same
lines; a worker started ahead waits for its plan, and one never given a plan, or dead before it was ready,
ends without being left behind."""

from __future__ import annotations

import os
import time

from normbench.timing.fresh import Started, run_fresh, worker_env

WORKER = """
import json, sys
from pathlib import Path
from normbench.timing.fresh import wait_for_plan, worker_args, write_line

plan_path, out_path, rest = worker_args(sys.argv[1:])
if rest == ["die"]:
    sys.exit("died before it was ready")
if plan_path is None and (plan_path := wait_for_plan()) is None:
    sys.exit(0)
plan = json.loads(Path(plan_path).read_text())
print("noise on stdout that nobody reads " * 5000)  # must not block the worker
with open(out_path, "w") as out:
    for n in plan["numbers"]:
        write_line(out, {"square": n * n, "pid": __import__("os").getpid()})
"""


def _env(tmp_path):
    (tmp_path / "toy_worker.py").write_text(WORKER)
    env = worker_env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    return env


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_worker_started_ahead_gives_the_same_lines_as_one_given_its_plan(tmp_path):
    env = _env(tmp_path)
    now = run_fresh("toy_worker", {"numbers": [1, 2, 3]}, env=env)
    ahead = Started("toy_worker", env=env)
    assert ahead.ready()
    later = ahead.run({"numbers": [1, 2, 3]})
    assert not now.died and not later.died
    assert [r["square"] for r in now.lines] == [r["square"] for r in later.lines] == [1, 4, 9]
    assert now.lines[0]["pid"] != later.lines[0]["pid"]  # two processes


def test_a_worker_never_given_a_plan_ends_when_closed(tmp_path):
    worker = Started("toy_worker", env=_env(tmp_path))
    assert worker.ready()
    pid = worker._proc.pid
    worker.close()
    assert worker._proc.returncode == 0
    time.sleep(0.1)
    assert not _alive(pid)


def test_a_worker_that_dies_before_it_is_ready_is_reported(tmp_path):
    worker = Started("toy_worker", "die", env=_env(tmp_path))
    assert not worker.ready()
    done = worker.run({"numbers": [1]})
    assert done.died and done.lines == []
    assert "died before it was ready" in done.reason
