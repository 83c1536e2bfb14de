"""Shared fixtures: tiny suites, the CLI in-process (Typer's runner) and as a real subprocess, one tiny run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

REPO = Path(__file__).resolve().parent.parent
PLUGINS_DIR = Path(__file__).resolve().parent / "plugins"

# Latency cases that take milliseconds: what every harness test runs (the numbers are not the point).
TINY_PARAMS = """[bench.params]
samples = 3
warmup_calls = 0
min_sample_s = 1e-4
min_run_s = 0
copy_probe = false
"""


def tiny_latency_suite(
    name: str = "tiny",
    norms: str = '["layernorm", "rmsnorm"]',
    sweep: str = "tokens = [8]\nd = [16]",
    params: str = TINY_PARAMS,
) -> str:
    return (
        f'name = "{name}"\n\n[[bench]]\nkind = "latency"\nnorms = {norms}\n[bench.sweep]\n{sweep}\n{params}'
    )


def pytest_configure(config):
    """Refuses a pytest that would ignore the test groups; one timing process per case (NORMBENCH_PROCESSES=1)
    unless a test asks for more. Under pytest-xdist, one torch thread per worker: workers as many as the cores would otherwise each spin
    a thread per core and oversubscribe them. Tests that need a thread count set and restore it themselves."""
    if (
        config.getoption("dist", "no") == "loadgroup"
        and "_nodeid" not in pytest.Item.nodeid.fget.__code__.co_names
    ):
        # pytest-xdist 3.8 groups tests (the Ray tests' xdist_group) by a suffix it writes to item._nodeid; a
        # pytest whose nodeid no longer reads it (9.2) would run the Ray tests side by side without a word
        raise pytest.UsageError(
            f"pytest {pytest.__version__} drops pytest-xdist's test groups: install the dev extras' pytest"
        )
    # One process per timing case unless a test asks for more (tests/test_processes.py): every other test
    # runs its latency cases here, where its test-only norms are registered, in milliseconds
    os.environ.setdefault("NORMBENCH_PROCESSES", "1")
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1 and workers >= (os.cpu_count() or 1):
        import torch

        torch.set_num_threads(1)


@pytest.fixture
def write_suite(tmp_path):
    """write_suite(text, name='suite.toml') -> path of a suite file in this test's tmp dir."""

    def write(text: str, name: str = "suite.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.fixture
def tiny_suite():
    """tiny_suite(**kw) -> the text of a latency suite of millisecond cases (see tiny_latency_suite)."""
    return tiny_latency_suite


@pytest.fixture
def cli():
    """cli(*args) -> typer Result of `normbench ARGS` run in this process (stdout and stderr apart)."""
    from normbench.cli import app

    runner = CliRunner()

    def invoke(*args, env: dict | None = None):
        return runner.invoke(app, [str(a) for a in args], env=env)

    return invoke


def make_child_env(**extra: str) -> dict[str, str]:
    """The environment of a real `normbench` process: this checkout first on the path, the test-only norms
    importable (NORMBENCH_PLUGINS=normbench_test_norms loads them), no debug unless asked."""
    # the page state too: a NORMBENCH_PAGES of the caller, or the THP_MEM_ALLOC_ENABLE an in-process run set
    dropped = ("NORMBENCH_DEBUG", "NORMBENCH_PLUGINS", "NORMBENCH_PAGES", "THP_MEM_ALLOC_ENABLE")
    env = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith("PYTEST_XDIST")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(PLUGINS_DIR), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep
    )
    env.update(extra)
    return env


@pytest.fixture
def child_env():
    """child_env(**extra) -> the environment for a real `normbench` child process (see make_child_env)."""
    return make_child_env


@pytest.fixture
def normbench_proc(tmp_path):
    """normbench_proc(*args, extra_env=None) -> CompletedProcess of `python -m normbench ARGS` (cwd: tmp dir)."""

    def run(*args, extra_env: dict | None = None, timeout: float = 120):
        return subprocess.run(
            [sys.executable, "-m", "normbench", *map(str, args)],
            cwd=tmp_path,
            env=make_child_env(**(extra_env or {})),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    """One real run of 12 millisecond cases (2 norms x 3 impls x 2 hidden), shared by the report tests:
    (results dir, run id)."""
    from normbench.cli import app

    root = tmp_path_factory.mktemp("tiny_run")
    suite = root / "tiny.toml"
    suite.write_text(tiny_latency_suite(sweep="tokens = [8]\nd = [16, 32]"))
    results = root / "results"
    result = CliRunner().invoke(app, ["run", str(suite), "--quiet", "--results", str(results)])
    assert result.exit_code == 0, result.output
    (run_id,) = [p.name for p in results.iterdir()]
    return results, run_id


@pytest.fixture(scope="session")
def dataset_runs(tmp_path_factory):
    """(results dir, id of a run of every bench kind, id of a latency-only run sharing 4 of its cases): the
    dataset and report-data tests (suites in _dataset_support.py)."""
    from _dataset_support import LATENCY, MIXED, run_suite

    root = tmp_path_factory.mktemp("dataset")
    mixed = run_suite(root, "mixed", MIXED)
    latency = run_suite(root, "lat", 'name = "lat"\n' + LATENCY)
    return root / "results", mixed, latency


# `make bench-compare`: a regression is one line and exit 1 (hooks in _bench_summary.py, importable alone so a
# test can load them with `-p _bench_summary`).
from _bench_summary import pytest_sessionstart, pytest_terminal_summary  # noqa: E402, F401
