"""`normbench upgrade` writes a run under the run's lock: a second upgrade or a `run --resume` while one runs is
refused naming its pid (and the run ends whole: every part current, no old parameter names left); a symlinked
parts/ is refused with nothing outside rewritten; a killed upgrade's temporaries are cleaned by the next; a part
that is a link is never renamed over."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import make_child_env
from typer.testing import CliRunner

from normbench.cli import app
from normbench.results.schema import SCHEMA_VERSION
from normbench.results.store import RunStore

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "upgrade"
RUN_ID = next((FIXTURES / "v2").iterdir()).name


@pytest.fixture
def old_run(tmp_path) -> Path:
    """A copy of the stored version-2 run (9 parts), in tmp_path/results."""
    shutil.copytree(FIXTURES / "v2", tmp_path / "results")
    return tmp_path / "results" / RUN_ID


def _normbench(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "normbench", *args],
        cwd=cwd,
        env=make_child_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _whole_and_current(run: Path) -> None:
    """Every part at the current version, no `hidden` left in params, the latency rows' d filled."""
    for part in (run / "parts").glob("*.parquet"):
        meta = pq.read_schema(part).metadata
        assert meta[b"normbench_schema_version"] == str(SCHEMA_VERSION).encode(), part
    frame = RunStore.open(run.parent, run.name).read()
    assert not frame["params"].str.contains('"hidden"').any()
    latency = frame[frame["bench"] == "latency"]
    assert not latency.empty and latency["d"].notna().all()


@pytest.mark.parametrize("second", [["upgrade", RUN_ID], ["run", "--resume", RUN_ID]])
def test_a_second_writer_during_an_upgrade_is_refused_with_the_pid(old_run, tmp_path, monkeypatch, second):
    import normbench.results.upgrade as upgrading

    seen: list[subprocess.CompletedProcess] = []
    write = upgrading.atomic_write

    def write_then_race(path, fill):
        if not seen:  # half-way through the first upgrade's parts: another process tries
            seen.append(_normbench(tmp_path, *second, "--results", str(old_run.parent)))
        write(path, fill)

    monkeypatch.setattr(upgrading, "atomic_write", write_then_race)
    first = CliRunner().invoke(app, ["upgrade", RUN_ID, "--results", str(old_run.parent)])
    assert first.exit_code == 0, first.output
    (other,) = seen
    assert other.returncode == 2, other.stdout + other.stderr
    assert f"error: run {RUN_ID} is being written by pid {os.getpid()}" in other.stderr
    assert "Traceback" not in other.stderr
    _whole_and_current(old_run)


def test_an_upgrade_refuses_a_symlinked_parts_folder(old_run, tmp_path, cli):
    elsewhere = tmp_path / "elsewhere"
    (old_run / "parts").rename(elsewhere)
    (old_run / "parts").symlink_to(elsewhere)
    before = {p.name: p.read_bytes() for p in elsewhere.iterdir()}
    done = cli("upgrade", RUN_ID, "--results", old_run.parent)
    assert done.exit_code == 2 and "Traceback" not in done.output
    assert (
        f"{old_run / 'parts'} is a symbolic link: normbench writes and moves files there only in a real folder"
        in (done.stderr)
    )
    assert {p.name: p.read_bytes() for p in elsewhere.iterdir()} == before
    assert json.loads((old_run / "manifest.json").read_text())["schema_version"] == 2


def test_a_killed_upgrades_temporary_is_cleaned_by_the_next(old_run, cli):
    part = sorted((old_run / "parts").glob("*.parquet"))[0]
    left = old_run / "parts" / f".{part.name}.424242.0badf00d.tmp"  # the name a killed writer leaves
    left.write_bytes(part.read_bytes()[:100])
    done = cli("upgrade", RUN_ID, "--results", old_run.parent)
    assert done.exit_code == 0, done.output
    assert not left.exists()
    assert not [p for p in (old_run / "parts").iterdir() if p.name.endswith(".tmp")]
    _whole_and_current(old_run)


def test_a_part_that_is_a_link_is_left_a_link_and_its_target_untouched(old_run, tmp_path, cli):
    part = sorted((old_run / "parts").glob("*.parquet"))[0]
    outside = tmp_path / "outside.parquet"
    shutil.move(part, outside)
    part.symlink_to(outside)
    before = outside.read_bytes()
    done = cli("upgrade", RUN_ID, "--results", old_run.parent)
    assert "not a regular file (a link or a device in parts/)" in done.output
    assert part.is_symlink() and outside.read_bytes() == before
