"""The CI workflow's shell steps (examples/ci/gate.sh, as examples/ci/normbench.yml calls them) on stored runs:
a baseline saved, then an unchanged run passes (exit 0), a regressed one fails with an ::error:: line per
regression (exit 1), one with a case not compared fails as inconclusive (exit 3); the markdown comparison
lands in $GITHUB_STEP_SUMMARY. GitHub itself is not run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _compare_support import ENV, store_run

REPO = Path(__file__).resolve().parent.parent
GATE = REPO / "examples" / "ci" / "gate.sh"
WORKFLOW = REPO / "examples" / "ci" / "normbench.yml"
COMMENT_WORKFLOW = REPO / "examples" / "ci" / "normbench-comment.yml"


def _gate(tmp_path: Path, *args: str, compare_args: str = "") -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "NORMBENCH_COMPARE_ARGS": compare_args,
        "NORMBENCH": f"{sys.executable} -m normbench",
        "PYTHON": sys.executable,
        "NORMBENCH_RESULTS": str(tmp_path / "results"),
        "NORMBENCH_BASELINES": str(tmp_path / "baselines"),
        "NORMBENCH_GATE_OUT": str(tmp_path / "out"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    return subprocess.run(
        ["bash", str(GATE), *args], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
    )


@pytest.mark.skipif(shutil.which("bash") is None, reason="the gate is a bash script")
def test_the_workflow_steps_gate_on_stored_runs(tmp_path):
    results = tmp_path / "results"
    store_run(results, "20260101-main")
    saved = _gate(tmp_path, "save", "20260101-main")
    assert saved.returncode == 0, saved.stderr

    store_run(results, "20260102-same", env={**ENV, "hostname": "fresh-runner"}, load=6.0)
    same = _gate(tmp_path, "compare", "latest")
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.startswith("PASS: no regression (exit 0)") and "::error" not in same.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert "### normbench compare: pass" in summary and "> [!TIP]" in summary  # the comment layout
    assert "| rel_err " not in summary  # unchanged rows stay out of the summary

    store_run(results, "20260103-worse", rel_err={("rmsnorm", 0.0): [1e-9, 1e-9]})
    worse = _gate(tmp_path, "compare", "20260103-worse")
    assert worse.returncode == 1, worse.stdout + worse.stderr
    errors = [s for s in worse.stdout.splitlines() if s.startswith("::error")]
    assert len(errors) == 1 and errors[0].startswith("::error title=normbench regression::jacobian rmsnorm:")
    assert (tmp_path / "out" / "comparison.json").is_file() and (tmp_path / "out" / "comparison.md").is_file()

    store_run(results, "20260104-more", extra_jacobian=True)
    more = _gate(tmp_path, "compare", "20260104-more")
    assert more.returncode == 3, more.stdout + more.stderr
    assert "::error title=normbench not compared::jacobian rmsnorm:module" in more.stdout
    assert "only in new" in more.stdout
    allowed = _gate(tmp_path, "compare", "20260104-more", compare_args="--allow-incomparable --factor 1.5")
    assert allowed.returncode == 0 and allowed.stdout.startswith(
        "PASS: no regression (1 not comparable, allowed)"
    )


@pytest.mark.skipif(shutil.which("bash") is None, reason="the gate is a bash script")
def test_without_a_baseline_the_gate_fails_with_the_reason(tmp_path):
    store_run(tmp_path / "results", "a")
    result = _gate(tmp_path, "compare", "a")
    assert result.returncode == 2
    assert "no baseline of suite 'gate'" in result.stderr and "::error title=normbench::" in result.stdout


def test_the_workflow_calls_the_gate_and_fails_on_its_exit_code():
    yaml = pytest.importorskip("yaml")
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["bench"]["steps"]
    runs = [s.get("run", "") for s in steps]
    # pull requests: base and head timed in this job; pushes: the deterministic gate against the baseline
    ab = next(s for s in steps if s.get("run") == 'bash examples/ci/gate.sh ab "origin/$BASE_REF" "$SUITE"')
    assert ab["env"]["BASE_REF"] == "${{ github.base_ref }}"  # through env:, never expanded inside run:
    assert not any("${{" in r for r in runs)
    push = next(s for s in steps if "gate.sh compare latest" in s.get("run", ""))
    assert "bash examples/ci/gate.sh save latest" in push["run"]
    assert "--deterministic-only" in push["env"]["NORMBENCH_COMPARE_ARGS"]  # no timing across hosted jobs
    assert not any("|| true" in r or "continue-on-error" in s for r, s in zip(runs, steps, strict=True))
    uses = [s["uses"] for s in steps if "uses" in s]
    assert all(re.fullmatch(r"[\w./-]+@[0-9a-f]{40}", u) for u in uses)  # pinned by commit
    text = WORKFLOW.read_text() + COMMENT_WORKFLOW.read_text()
    assert all(
        re.search(r"@[0-9a-f]{40} # v\d+\.\d+\.\d+", line) for line in text.splitlines() if "uses:" in line
    )
    assert any(u.startswith("actions/cache/restore@") for u in uses)
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert workflow["concurrency"]["cancel-in-progress"] == "${{ github.event_name == 'pull_request' }}"
    assert workflow["permissions"] == {"contents": "read"}
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["persist-credentials"] is False and checkout["with"]["fetch-depth"] == 0


def test_the_comment_workflow_reads_the_artifact_as_data_only():
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load(COMMENT_WORKFLOW.read_text())
    trigger = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads `on` as True
    assert trigger["workflow_run"]["workflows"] == ["normbench"] and workflow["permissions"] == {}
    job = workflow["jobs"]["comment"]
    assert job["permissions"] == {"actions": "read", "pull-requests": "write"}
    assert not any("checkout" in s.get("uses", "") or "run" in s for s in job["steps"])  # no code of the PR
    script = next(s for s in job["steps"] if "github-script" in s.get("uses", ""))["with"]["script"]
    assert "<!-- normbench-ab -->" in script and "updateComment" in script and "head.sha" in script
