"""Third-party plugins: a package pip-installs a norm, a bench kind and a claim through entry points, and
`list`, `validate`, `run` and `report` use them; a plugin that fails to import is one line and exit 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_child_env

PLUGIN_SRC = Path(__file__).parent / "plugin_pkg"

SUITE = """
name = "plugin"
description = "a plugin norm and a plugin bench"
threads = 1
claims = ["scalenorm_unit_rms"]

[[bench]]
kind = "latency"
norms = ["scalenorm", "layernorm:module"]
[bench.sweep]
d = [16]
[bench.params]
tokens = 8
samples = 3
warmup_calls = 1
min_sample_s = 0.0001

[[bench]]
kind = "outstats"
norms = ["scalenorm", "layernorm", "rmsnorm"]
[bench.sweep]
hidden = [32, 256]
"""


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory) -> Path:
    """The plugin package installed with pip into its own folder (as `pip install --target` does)."""
    root = tmp_path_factory.mktemp("plugin")
    src = root / "src"
    shutil.copytree(PLUGIN_SRC, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = root / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["--target", str(site), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert list(site.glob("normbench_scalenorm-*.dist-info"))
    return site


def normbench(cwd: Path, site: Path, *args: str) -> subprocess.CompletedProcess:
    env = make_child_env()
    env["PYTHONPATH"] = f"{site}:{env['PYTHONPATH']}"
    return subprocess.run(
        [sys.executable, "-m", "normbench", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_installed_plugin_is_listed_run_and_reported(plugin_site, tmp_path):
    listed = normbench(tmp_path, plugin_site, "list")
    assert listed.returncode == 0, listed.stderr
    assert "scalenorm:module" in listed.stdout
    assert "[plugin: normbench_scalenorm.norm]" in " ".join(listed.stdout.split())  # wrapped
    assert "outstats" in listed.stdout and "[plugin: normbench_scalenorm.bench]" in listed.stdout
    assert "normbench-scalenorm 0.1.0" in listed.stdout

    (tmp_path / "plugin.toml").write_text(SUITE)
    assert normbench(tmp_path, plugin_site, "validate", "plugin.toml").returncode == 0
    ran = normbench(tmp_path, plugin_site, "run", "plugin.toml", "--quiet")
    assert ran.returncode == 0, ran.stderr
    manifest = json.loads((tmp_path / "results" / ran.stdout.strip() / "manifest.json").read_text())
    (plugin,) = manifest["env"]["plugins"]  # the distribution whose norm and bench the run imported
    assert (plugin["name"], plugin["version"]) == ("normbench-scalenorm", "0.1.0")
    assert {"normbench.norms:scalenorm", "normbench.benches:outstats"} <= set(plugin["registered"])
    report = normbench(tmp_path, plugin_site, "report", "latest", "--full")
    assert report.returncode == 0, report.stderr
    assert "scalenorm:module" in report.stdout
    assert "Output statistics (plugin bench)" in report.stdout
    assert "scalenorm_unit_rms" in report.stdout and "PASS" in report.stdout


def test_plugin_that_fails_to_import_is_one_line(tmp_path):
    """An installed distribution whose entry point names a missing module."""
    site = tmp_path / "site"
    info = site / "broken_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[normbench.norms]\nbroken = no_such_module_xyz\n")
    done = normbench(tmp_path, site, "list", "norms")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    first = done.stderr.splitlines()[0]
    assert "plugin 'broken'" in first and "broken-plugin 1.0" in first and "no_such_module_xyz" in first


def test_misspelled_env_plugin_is_one_line(tmp_path):
    env = make_child_env(NORMBENCH_PLUGINS="normbench_tset_norms")
    done = subprocess.run(
        [sys.executable, "-m", "normbench", "list", "norms"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "plugin 'normbench_tset_norms' (from NORMBENCH_PLUGINS) failed to import" in done.stderr
