"""normbench ab end to end in a plugin's repository: a commit that makes one implementation do 10x the work
is a regression naming that implementation (exit 1), the unchanged one is never a regression, and the base
side is the plugin as the base commit has it (loaded beside the working tree's in each process). The plant
is far beyond any machine's noise, so the test holds on a loaded CI machine; the gate's power at 1.3x is a
benchmark (scripts/ab_gate.py), not a test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = """
import time
import torch.nn.functional as F
from normbench.norms.registry import Built, Norm, impl, register_norm

WORK = {work}


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


@register_norm
class ABNorm(Norm):
    name = "abnorm"

    @impl("steady", baseline=True)
    def steady(self, hidden, *, eps, dtype, device):
        return Built(lambda x: (spin(2e-4), F.layer_norm(x, (hidden,), eps=eps))[1])

    @impl("changed")
    def changed(self, hidden, *, eps, dtype, device):
        return Built(lambda x: (spin(WORK), F.layer_norm(x, (hidden,), eps=eps))[1])

    def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
        return 2 * tokens * hidden * itemsize
"""

SUITE = """
name = "abplug"
[[bench]]
kind = "latency"
norms = ["abnorm"]
[bench.params]
tokens = 16
d = 64
samples = 16
min_sample_s = 1e-3
min_run_s = 0.0
accuracy_rows = 0
"""


def git(repo: Path, *args: str) -> None:
    cmd = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args]
    subprocess.run(cmd, cwd=repo, check=True, capture_output=True)


@pytest.mark.slow  # three worker processes, each importing torch (~20 s on 2 cores)
def test_a_planted_slowdown_is_a_regression_naming_the_implementation(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "suite.toml").write_text(SUITE)
    (repo / "abplug.py").write_text(PLUGIN.format(work="2e-4"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "abplug.py").write_text(PLUGIN.format(work="2e-3"))  # 10x the steady one's wait
    git(repo, "commit", "-qam", "head: more work")
    env = {
        **os.environ,
        "NORMBENCH_PLUGINS": "abplug",
        "PYTHONPATH": os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]),
    }
    cmd = [sys.executable, "-m", "normbench", "ab", "HEAD~1", "suite.toml", "-k", "3", "--threads", "1"]
    cmd += ["--format", "json", "--results", str(tmp_path / "results")]
    done = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(done.stdout)
    marks = {c["case"].split()[0]: c for c in data["cases"]}
    assert marks["abnorm:changed"]["mark"] == "+" and marks["abnorm:changed"]["ratio"] > 3
    assert marks["abnorm:steady"]["mark"] in ("=", "?"), marks["abnorm:steady"]  # never + or -
    assert data["max_spread"] >= data["aa_spread"] >= 1 and data["factor"] == 1.1
    (stored,) = (tmp_path / "results" / ".ab").glob("*.json")  # the result is kept, threshold included
    assert json.loads(stored.read_text())["aa_spread"] == data["aa_spread"]
    assert not (tmp_path / "results" / ".ab").parent.joinpath("base").exists()
