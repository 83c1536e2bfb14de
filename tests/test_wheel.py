"""normbench as a user installs it: a wheel built from this checkout, in a fresh environment outside the
repository (torch and the other dependencies from the test interpreter, normbench only from the wheel):
--version, the shipped suites by name, a run of the quick suite and its report."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import REPO

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("wheel")
    # Build from a clean copy of the checkout: setuptools reuses an in-tree build/ folder, which could carry
    # modules deleted since into the wheel.
    src = root / "src"
    skip_anywhere = shutil.ignore_patterns(".git", ".venv", "*.egg-info", "__pycache__", ".*cache")

    def skip(folder: str, names: list[str]) -> set[str]:
        # build/ and results/ only at the top: normbench/results/ is a package the wheel must hold (skipping
        # it everywhere let the editable install of another checkout fill in for it unnoticed)
        top = {"build", "results"} & set(names) if Path(folder) == REPO else set()
        return skip_anywhere(folder, names) | top

    shutil.copytree(REPO, src, ignore=skip, symlinks=True)
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(root),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    assert "Warning" not in built.stderr and "deprecated" not in built.stderr.lower(), built.stderr
    (wheel,) = root.glob("normbench-*.whl")
    site = root / "site"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    # The dependencies (torch, pandas, ...) come from this interpreter's site-packages, after the wheel; the
    # editable install of the checkout is not activated there (its .pth hook runs only in a site dir).
    deps = sysconfig.get_paths()["purelib"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NORMBENCH") and k != "PYTHONPATH"}
    env["PYTHONPATH"] = f"{site}{os.pathsep}{deps}"
    return root, env


QUICK_SLICE = (
    "latency * tokens=512 d=256 dtype=fp32 mode=fwd *",
    "block *",
    "jacobian *",
    "init *",
    "stability * placement=pre *",
)


def nb(cwd: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-s", "-m", "normbench", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_wheel_runs_shipped_suites_outside_the_repo(wheel_env):
    root, env = wheel_env
    work = root / "elsewhere"
    work.mkdir()
    where = subprocess.run(
        [sys.executable, "-s", "-c", "import normbench; print(normbench.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert str(root / "site") in where.stdout, where.stdout + where.stderr  # the wheel, not the checkout

    version = nb(work, env, "--version")
    assert version.returncode == 0 and version.stdout.startswith("normbench "), version.stderr

    listed = nb(work, env, "list", "suites")
    assert listed.returncode == 0, listed.stderr
    for name in ("quick", "paper", "latency", "jacobian", "stability"):
        assert f"  {name} " in listed.stdout

    # Every bench kind of the shipped quick suite, a slice of each (the README test runs it whole): what the
    # wheel must hold is every module those kinds import, not the quick suite's minutes again.
    ran = nb(work, env, "run", "quick", "--quiet", *(a for s in QUICK_SLICE for a in ("--only", s)))
    assert ran.returncode in (0, 1), ran.stderr  # 1 only if a case failed; the run itself must finish
    assert "no such suite" not in ran.stderr
    kinds = nb(work, env, "report", "latest", "-f", "csv")
    assert kinds.returncode == 0, kinds.stderr
    assert all(f",{kind}," in kinds.stdout for kind in ("latency", "block", "jacobian", "init", "stability"))
    report = nb(work, env, "report", "latest")
    assert report.returncode == 0, report.stderr
    assert report.stdout.startswith("Summary\n") and "latency    per shape" in report.stdout
