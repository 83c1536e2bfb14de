"""The Ray executor and signals under hostile and careless use: a session never ends `running`, --jobs
above the cores is capped, an unreachable or non-Ray address is given up in bounded time, a case no node can
run is refused before anything is scheduled, a broken Ray install is one line, SIGTERM during Ray's start-up
and a second signal mid-run end with 143, a message, and a resumable (or no) run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import types
from pathlib import Path

import pytest
from _stores import create_store
from conftest import tiny_latency_suite

from normbench.core.errors import NormbenchError

# Ray's tests start local clusters over every core: under pytest-xdist they share one worker, in turn.
pytestmark = pytest.mark.xdist_group("ray")


def _suite(tmp_path: Path, norms: str = '["layernorm:module"]') -> Path:
    path = tmp_path / "s.toml"
    path.write_text("threads = 1\n" + tiny_latency_suite(norms=norms))
    return path


# -- a session never leaves `running` behind ----------------------------------------------------------------
class _Failing:
    name = "local"

    def __init__(self, exc: BaseException):
        self.exc = exc

    def run(self, *args, **kwargs):
        raise self.exc


@pytest.mark.parametrize("exc", [SystemExit(15), RuntimeError("a bug")])
def test_an_exception_out_of_the_executor_leaves_the_run_interrupted(tmp_path, exc):
    from normbench.executors.session import run_session
    from normbench.results.store import RunStore

    store = create_store(tmp_path, {"run_id": "RUN", "cases": [{"case_id": "abc"}], "sessions": []})
    case = types.SimpleNamespace(case_id="abc")
    with pytest.raises(type(exc)):
        run_session(
            store,
            [case],
            set(),
            "now",
            _Failing(exc),
            lambda todo, finished: contextlib.nullcontext(),
            True,
            print,
        )
    manifest = RunStore.open(tmp_path, "RUN").manifest
    assert manifest["status"] == "interrupted" and "finished" in manifest["sessions"][-1]


def test_a_second_sigterm_exits_143_and_leaves_the_run_interrupted(tmp_path):
    from normbench.executors.session import run_session
    from normbench.results.store import RunStore
    from normbench.runner import StopNow

    store = create_store(tmp_path, {"run_id": "RUN", "cases": [{"case_id": "abc"}], "sessions": []})
    case = types.SimpleNamespace(case_id="abc")
    failing = _Failing(StopNow(signal.SIGTERM))
    outcome, remaining = run_session(
        store, [case], set(), "now", failing, lambda todo, finished: contextlib.nullcontext(), True, print
    )
    assert outcome.exit_code == 143 and remaining == 1
    assert RunStore.open(tmp_path, "RUN").manifest["status"] == "interrupted"


# -- 7, 9. Ray: what can be checked before Ray starts, and start-up under a fake Ray ---------------------------
def test_local_jobs_above_the_cores_are_capped_with_a_warning():
    from normbench.executors.ray_cluster import cap_local_jobs

    said = []
    cores = os.cpu_count() or 1
    assert cap_local_jobs(cores + 62, None, said.append) == cores
    assert said == [
        f"warning: --jobs {cores + 62} is more than this machine's {cores} cores (each Ray worker is a "
        f"process of ~350 MB, and cases would compete for the cores); using {cores}"
    ]
    assert cap_local_jobs(cores + 62, "auto", said.append) == cores + 62  # a cluster: tasks in flight
    assert cap_local_jobs(None, None, said.append) is None and len(said) == 1


def test_an_unreachable_address_is_refused_at_once_and_creates_nothing(tmp_path, cli):
    pytest.importorskip("ray")
    import time

    suite = _suite(tmp_path)
    start = time.monotonic()
    done = cli("run", suite, "--executor", "ray", "--address", "127.0.0.1:1", "--results", tmp_path / "r")
    assert done.exit_code == 2 and "Traceback" not in done.output
    assert "error: --address 127.0.0.1:1: cannot reach 127.0.0.1:1 within 10 s (Connection refused)" in (
        done.stderr
    )
    assert time.monotonic() - start < 60 and not (tmp_path / "r").exists()


@pytest.fixture(autouse=True)
def _ray_environment(monkeypatch):
    """Start-up sets these for a local Ray when missing: restored after each test."""
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


class FakeRay(types.SimpleNamespace):
    """What the executor calls on `ray` during start-up; `init` may act as Ray's does."""

    def __init__(self, cpus: float = 2.0, gpus: float = 0.0, on_init=None):
        super().__init__(started=False, shut=False)
        self.resources = {"CPU": cpus, "GPU": gpus, "normbench_node": 1.0}
        self.on_init = on_init

    def init(self, **kwargs):
        self.started = True
        if self.on_init:
            self.on_init()

    def is_initialized(self):
        return self.started

    def shutdown(self):
        self.shut = True

    def nodes(self):
        return [{"Alive": True, "Resources": self.resources}]

    def cluster_resources(self):
        return self.resources


def _cases(tmp_path, device="cpu"):
    from normbench.suite.expand import expand
    from normbench.suite.load import parse_suite

    text = tiny_latency_suite(
        norms='["layernorm:module"]', sweep=f'tokens = [8]\nd = [16]\ndevice = ["{device}"]'
    )
    return expand(parse_suite(text, str(tmp_path / "s.toml")))


def test_a_case_no_node_can_run_is_refused_before_anything_is_scheduled(tmp_path, monkeypatch):
    from normbench.executors import ray_cluster

    fake = FakeRay(cpus=2)
    monkeypatch.setattr(ray_cluster, "import_ray", lambda: fake)
    with pytest.raises(NormbenchError) as info:
        with ray_cluster.started_ray(None, None, _cases(tmp_path), 4, print):
            pytest.fail("no case can run: nothing may be scheduled")
    assert (
        "asks Ray for 4 CPUs (its threads), more than any node of the cluster offers (the largest has 2 "
        in (str(info.value))
    )
    assert "give --threads 2" in str(info.value) and fake.shut
    with ray_cluster.started_ray(None, None, _cases(tmp_path), 2, print) as gpus:
        assert gpus is False


def test_a_cuda_case_asks_for_no_gpu_where_the_cluster_has_none(tmp_path):
    from normbench.executors.ray import task_options

    (case,) = _cases(tmp_path, device="cuda")
    assert "num_gpus" not in task_options(case, 1, gpus=False)
    assert task_options(case, 1, gpus=True)["num_gpus"] == 1


def test_sigterm_during_rays_start_up_is_interrupted_with_a_message(tmp_path, monkeypatch, cli):
    """Ray's ray.init installs a SIGTERM handler that calls sys.exit(15) silently; a SIGTERM then, or
    before it, ends the command with 143 and one line, and no run folder."""
    from normbench.executors import ray as ray_module
    from normbench.executors import ray_cluster

    def like_ray():
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(signum))
        os.kill(os.getpid(), signal.SIGTERM)

    for on_init in (like_ray, lambda: os.kill(os.getpid(), signal.SIGTERM)):
        fake = FakeRay(on_init=on_init)
        monkeypatch.setattr(ray_cluster, "import_ray", lambda fake=fake: fake)
        monkeypatch.setattr(ray_module, "import_ray", lambda fake=fake: fake)
        handler = signal.getsignal(signal.SIGTERM)
        done = cli("run", _suite(tmp_path), "--executor", "ray", "--results", tmp_path / "r")
        assert done.exit_code == 143, done.output
        assert "SIGTERM while starting Ray: nothing was run" in done.stderr
        assert not (tmp_path / "r").exists() and fake.shut
        assert signal.getsignal(signal.SIGTERM) is handler  # Ray's handler did not stay behind


@pytest.mark.slow
def test_threads_above_a_local_rays_cores_is_refused_without_a_run(tmp_path, normbench_proc):
    pytest.importorskip("ray")
    _suite(tmp_path)
    done = normbench_proc(
        "run", "s.toml", "--executor", "ray", "--jobs", "1", "--threads", "2", "--quiet", timeout=300
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "asks Ray for 2 CPUs (its threads), more than any node of the cluster offers" in done.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_two_sigterms_under_ray_exit_143_with_the_run_interrupted_and_resumable(tmp_path, child_env):
    """The first SIGTERM cancels the cases in flight; a second one while they are being cancelled and the
    record written does not cut the record short: exit 143, status interrupted, the resume command printed.
    (A signal in the middle of ray.shutdown() itself can still kill the process: Ray's C++ shutdown sets
    SIGTERM to SIG_DFL partway through, measured 0.2-0.5 s into its ~1.4 s. The record is written by then,
    and the handlers are re-armed after it.)"""
    import time

    pytest.importorskip("ray")
    from test_ray import start_ray_run_after_first_case

    proc = start_ray_run_after_first_case(tmp_path, child_env())
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr
    (run,) = (tmp_path / "results").iterdir()
    assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"
    assert f"normbench run --resume {run.name}" in stderr


@pytest.mark.slow
def test_an_address_that_answers_tcp_but_not_ray_is_given_up_in_bounded_time(tmp_path, normbench_proc):
    """A port that accepts connections but is no Ray head: Ray alone retries for ~14 minutes."""
    import socket
    import time

    pytest.importorskip("ray")
    _suite(tmp_path)
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        start = time.monotonic()
        done = normbench_proc(
            "run",
            "s.toml",
            "--executor",
            "ray",
            "--address",
            f"127.0.0.1:{port}",
            extra_env={"NORMBENCH_RAY_TIMEOUT_S": "5"},
            timeout=300,
        )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"--address 127.0.0.1:{port}: cannot join the Ray cluster: no answer within 5 s" in done.stderr
    assert (
        time.monotonic() - start < 60 and not (tmp_path / "results").exists()
    )  # ~20 s measured, 44 s before Ray's waits were bounded


def test_a_broken_ray_install_is_one_line_and_creates_nothing(tmp_path):
    """Ray that fails to import with something other than ImportError (a missing shared library)."""
    import subprocess

    from conftest import make_child_env

    fake = tmp_path / "broken" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise OSError("libray.so: cannot open shared object file")\n')
    _suite(tmp_path)
    env = make_child_env()
    env["PYTHONPATH"] = f"{fake.parent}:{env['PYTHONPATH']}"
    done = subprocess.run(
        [sys.executable, "-m", "normbench", "run", "s.toml", "--executor", "ray"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        "error: --executor ray: Ray is installed but fails to import (OSError: libray.so: cannot open shared "
        "object file); reinstall it" in done.stderr
    )
    assert not (tmp_path / "results").exists()
