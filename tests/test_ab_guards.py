"""normbench ab's guards: every output and the results folder are checked before any work, the result is
stored under a name no run id can take without replacing another, a base without normbench is refused in
normbench's checkout, bad environments and a broken --base-python are one line with exit 2 before the
worktree is made, and a SIGTERM or SIGKILL leaves no worker and no worktree behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _compare_support import store_run

from normbench.ab.gate import ABResult
from normbench.ab.guard import AB_FOLDER, ab_folder, store_exclusive
from normbench.ab.sides import check_base
from normbench.core.children import die_with_parent
from normbench.core.errors import NormbenchError
from normbench.results.paths import name_problem

SUITE = """
name = "abguard"
[[bench]]
kind = "latency"
norms = ["guardnorm"]
[bench.params]
tokens = 8
d = 16
samples = 16
min_sample_s = 1e-3
min_run_s = 0.0
accuracy_rows = 0
"""

PLUGIN = """
import os, time
import torch.nn.functional as F
from normbench.norms.registry import Built, Norm, impl, register_norm


def slow(x, hidden, eps):
    time.sleep(0.05)
    return F.layer_norm(x, (hidden,), eps=eps)


@register_norm
class GuardNorm(Norm):
    name = "guardnorm"

    @impl("only", baseline=True)
    def only(self, hidden, *, eps, dtype, device):
        with open(os.environ["GUARD_PIDS"], "a") as f:
            f.write(f"{os.getpid()}\\n")
        return Built(lambda x: slow(x, hidden, eps))

    def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
        return 2 * tokens * hidden * itemsize
"""


def git(repo: Path, *args: str) -> str:
    cmd = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args]
    return subprocess.run(cmd, cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    """A plugin's repository of two commits whose one norm sleeps 50 ms a call (a worker busy for long)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "suite.toml").write_text(SUITE)
    (repo / "plain.toml").write_text(SUITE.replace("guardnorm", "layernorm"))
    (repo / "guardplug.py").write_text(PLUGIN)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "guardplug.py").write_text(PLUGIN + "\n# head\n")
    git(repo, "commit", "-qam", "head")
    return repo


def _env(repo: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NORMBENCH_PAGES", "NORMBENCH_DEBUG")}
    pythonpath = os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")])
    return {**env, "NORMBENCH_PLUGINS": "guardplug", "PYTHONPATH": pythonpath, **extra}


def _worktrees(repo: Path) -> int:
    return git(repo, "worktree", "list", "--porcelain").count("worktree ")


def test_the_markdown_output_follows_the_output_rule_before_any_work(cli, tmp_path):
    store_run(tmp_path / "results", "20260101-run")
    manifest = tmp_path / "results" / "20260101-run" / "manifest.json"
    before = manifest.read_bytes()
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere" / "x.md")
    for path, why in (
        (manifest, "would write inside stored run 20260101-run"),
        (tmp_path / "dangling", "is a link to nothing"),
        (tmp_path, "is a folder"),
    ):
        done = cli("ab", "no-such-base", "--markdown", path, "--results", tmp_path / "elsewhere")
        assert done.exit_code == 2 and f"--markdown {path}: {why}" in done.stderr, done.stderr
    assert manifest.read_bytes() == before and not (tmp_path / "nowhere").exists()


def test_the_results_folder_is_checked_before_any_work(cli, tmp_path):
    store_run(tmp_path / "results", "20260101-run")
    done = cli("ab", "no-such-base", "--results", tmp_path / "results" / "20260101-run")
    assert done.exit_code == 2 and "would write inside stored run 20260101-run" in done.stderr, done.stderr
    (tmp_path / "flat").write_text("")
    done = cli("ab", "no-such-base", "--results", tmp_path / "flat")
    assert done.exit_code == 2 and "not a folder" in done.stderr
    (tmp_path / "r2").mkdir()
    (tmp_path / "r2" / AB_FOLDER).write_text("")
    with pytest.raises(NormbenchError, match="cannot create .*File exists"):
        ab_folder(tmp_path / "r2")


def test_results_are_stored_under_a_name_no_run_id_takes_and_never_replaced(tmp_path):
    assert name_problem(AB_FOLDER) is not None and name_problem("ab") is None
    folder = ab_folder(tmp_path / "results")
    result = ABResult("main", "c" * 40, "h", "in-process", 1.1, "paired", 3, 1.0, 1.0, [], 1.0)
    first = store_exclusive(folder, "20260101-000000-cccccccc", result)
    second = store_exclusive(folder, "20260101-000000-cccccccc", result)
    assert first != second and first.parent == second.parent == tmp_path / "results" / AB_FOLDER
    assert json.loads(second.read_text())["base_commit"] == "c" * 40


def test_a_base_without_normbench_is_refused_in_normbench_s_checkout(tmp_path):
    root, tree = tmp_path / "root", tmp_path / "tree"
    (root / "normbench" / "norms").mkdir(parents=True)
    (root / "normbench" / "norms" / "registry.py").write_text("")
    tree.mkdir()
    with pytest.raises(NormbenchError, match="holds no normbench/norms/registry.py"):
        check_base(root, tree, "orphan")
    check_base(tmp_path / "plugin-repo", tree, "HEAD~1")  # a plugin's repository: its base has no normbench


@pytest.mark.parametrize(
    "args, env, message",
    [
        ([], {"NORMBENCH_PAGES": "bogus"}, "NORMBENCH_PAGES"),
        (["--base-python", "/no/such/python"], {}, "--base-python /no/such/python: cannot start it"),
        (["--base-python", "FAKE"], {}, "cannot import torch and normbench: ModuleNotFoundError"),
        (["-k", str(10**20)], {}, "--processes"),
    ],
)
def test_bad_environments_are_one_line_before_the_worktree(cli, repo, monkeypatch, args, env, message):
    fake = repo.parent / "python-without-torch"
    fake.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n")
    fake.chmod(0o755)
    args = [str(fake) if a == "FAKE" else a for a in args]
    monkeypatch.chdir(repo)
    done = cli("ab", "HEAD~1", "plain.toml", *args, "--results", repo.parent / "results", env=env)
    assert done.exit_code == 2 and message in done.stderr, done.stderr
    assert _worktrees(repo) == 1 and "Traceback" not in done.stderr


def test_a_child_dies_with_its_parent(tmp_path):
    """A parent that is SIGKILLed takes its child along (prctl PR_SET_PDEATHSIG, Linux)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the parent-death signal is Linux's")
    parent_code = (
        "import subprocess, sys\n"
        "from normbench.core.children import die_with_parent\n"
        "child = subprocess.Popen(['sleep', '60'], preexec_fn=die_with_parent())\n"
        "print(child.pid, flush=True)\n"
        "child.wait()\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    assert _gone(child), "the child outlived its parent"
    assert die_with_parent() is not None


def _gone(pid: int, wait_s: float = 10.0) -> bool:
    """The process has ended (a zombie nobody reaped counts as ended)."""
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow  # two processes importing torch (~15 s on 2 cores)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_cancelled_ab_leaves_no_worker_and_no_worktree(repo, tmp_path, sig):
    pids = tmp_path / "pids"
    cmd = [sys.executable, "-m", "normbench", "ab", "HEAD~1", "suite.toml", "-k", "3", "--threads", "1"]
    cmd += ["--no-deterministic", "--all-cases", "--results", str(tmp_path / "results")]
    proc = subprocess.Popen(cmd, cwd=repo, env=_env(repo, GUARD_PIDS=str(pids)), stderr=subprocess.PIPE)
    end = time.monotonic() + 120
    while not (pids.exists() and pids.read_text().strip()) and time.monotonic() < end:
        assert proc.poll() is None, proc.stderr.read().decode()
        time.sleep(0.1)
    worker = int(pids.read_text().split()[0])
    assert worker != proc.pid  # the norm is built in the worker, not in ab itself
    proc.send_signal(sig)
    proc.wait(timeout=60)
    stderr = proc.stderr.read().decode()
    assert proc.returncode == (128 + sig if sig == signal.SIGTERM else -sig), stderr
    assert _gone(worker), "the worker outlived ab"
    if sig == signal.SIGTERM:  # SIGKILL runs no cleanup: `git worktree prune` finds it gone later
        assert _worktrees(repo) == 1 and "Traceback" not in stderr, stderr
        assert not list((tmp_path / "results").rglob("*.json"))


@pytest.mark.slow  # one worker process importing torch
def test_the_verdict_is_printed_before_the_result_is_stored(cli, repo, monkeypatch):
    def full_disk(folder, stem, result):
        raise NormbenchError(f"cannot store the result in {folder}: No space left on device")

    monkeypatch.setattr("normbench.ab.service.store_exclusive", full_disk)
    monkeypatch.chdir(repo)
    args = ["ab", "HEAD~1", "plain.toml", "-k", "1", "--threads", "1", "--all-cases", "--no-deterministic"]
    done = cli(*args, "--format", "json", "--results", repo.parent / "results")
    assert done.exit_code == 2 and "No space left on device" in done.stderr, done.stderr
    assert json.loads(done.stdout)["verdict"].startswith(("PASS", "INCONCLUSIVE", "REGRESSION"))
