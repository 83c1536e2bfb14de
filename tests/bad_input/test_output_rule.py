"""Every writer (export, report -o, plot, baseline save) follows one output rule: a device or a pipe at the path
is written in place and never replaced by a regular file, a full device is one line and exit 2, a link planted
at a temporary's name is never followed, a link at the path keeps pointing where it did, a link to nothing is
refused, and `-o -` streams every format."""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import make_child_env


@pytest.fixture
def results(tiny_run, tmp_path, monkeypatch):
    """A copy of the shared tiny run under ./results, named RUN; the test's cwd is tmp_path."""
    source, run_id = tiny_run
    shutil.copytree(source / run_id, tmp_path / "results" / run_id)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NORMBENCH_DEBUG", raising=False)
    return tmp_path / "results", run_id


def _node(path: Path, minor: int) -> Path:
    """A private character device with the numbers of /dev/null (minor 3) or /dev/full (minor 7)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here ({exc})")
    return path


def _one_line_error(result) -> str:
    lines = result.stderr.splitlines()
    assert result.exit_code == 2 and lines and lines[0].startswith("error: "), result.output
    assert len(lines) == 2 and "Traceback" not in result.output, result.stderr
    return lines[0]


def test_export_onto_a_device_writes_into_it_and_leaves_the_node(results, cli, tmp_path):
    folder, run_id = results
    node = _node(tmp_path / "null", 3)
    done = cli("export", run_id, "-r", folder, "-f", "csv", "-o", node)
    assert done.exit_code == 0, done.output
    assert stat.S_ISCHR(os.lstat(node).st_mode), "the device node became a regular file"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_export_onto_a_full_device_is_one_line_and_exit_2(results, cli, tmp_path):
    folder, run_id = results
    node = _node(tmp_path / "full", 7)
    done = cli("export", run_id, "-r", folder, "-f", "csv", "-o", node)
    assert "No space left on device" in _one_line_error(done)
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_export_and_report_into_a_pipe_reach_its_reader(results, cli, tmp_path):
    folder, run_id = results
    for args in (
        ["export", run_id, "-r", folder, "-f", "jsonl"],
        ["report", run_id, "-r", folder, "-f", "json"],
    ):
        fifo = tmp_path / "pipe"
        os.mkfifo(fifo)
        got: list[bytes] = []
        reader = threading.Thread(target=lambda f=fifo, g=got: g.append(Path(f).read_bytes()), daemon=True)
        reader.start()
        done = cli(*args, "-o", fifo)
        reader.join(timeout=30)
        assert done.exit_code == 0, done.output
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the pipe became a regular file"
        assert got and got[0].strip(), "the reader got nothing"
        first = got[0].decode().splitlines()[0]
        assert json.loads(first if args[0] == "export" else got[0].decode())
        fifo.unlink()


def test_a_link_planted_at_the_old_temporary_name_is_never_followed(results, cli, tmp_path):
    folder, run_id = results
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / ".out.csv.tmp").symlink_to(victim)
    done = cli("export", run_id, "-r", folder, "-o", "out.csv")
    assert done.exit_code == 0, done.output
    assert victim.read_text() == "precious"
    assert (tmp_path / "out.csv").is_file() and not (tmp_path / "out.csv").is_symlink()
    assert (tmp_path / "out.csv").read_text().startswith("run_id,")


def test_a_link_at_the_output_keeps_pointing_at_its_file(results, cli, tmp_path):
    """`-o latest.csv` where latest.csv links to the real file: the file is replaced, the link stays."""
    folder, run_id = results
    (tmp_path / "data").mkdir()
    real = tmp_path / "data" / "real.csv"
    real.write_text("old")
    (tmp_path / "latest.csv").symlink_to(real)
    done = cli("export", run_id, "-r", folder, "-o", "latest.csv")
    assert done.exit_code == 0, done.output
    assert (tmp_path / "latest.csv").is_symlink() and real.read_text().startswith("run_id,")


def test_a_link_to_nothing_is_refused_by_every_writer(results, cli, tmp_path):
    folder, run_id = results
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "out.csv").symlink_to(outside / "made.csv")
    line = _one_line_error(cli("export", run_id, "-r", folder, "-o", "out.csv"))
    assert line == "error: --output out.csv: is a link to nothing; remove it or give another name"
    (tmp_path / "out.md").symlink_to(outside / "made.md")
    assert "is a link to nothing" in _one_line_error(cli("report", run_id, "-r", folder, "-o", "out.md"))
    assert not list(outside.iterdir())


def test_plot_never_writes_a_figure_through_a_link_to_nothing(results, cli, tmp_path):
    folder, run_id = results
    first = cli("plot", run_id, "-r", folder, "-o", "figs")
    assert first.exit_code == 0, first.output
    figure = Path(first.stdout.split()[0])
    figure.unlink()
    outside = tmp_path / "outside"
    outside.mkdir()
    figure.symlink_to(outside / "made.png")
    assert "is a link to nothing" in _one_line_error(cli("plot", run_id, "-r", folder, "-o", "figs"))
    assert not list(outside.iterdir())


def test_dash_streams_every_format_parquet_included(results, tmp_path):
    folder, run_id = results
    done = subprocess.run(
        [sys.executable, "-m", "normbench", "export", run_id, "-r", str(folder), "-f", "parquet", "-o", "-"],
        cwd=tmp_path,
        env=make_child_env(),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    table = pq.read_table(io.BytesIO(done.stdout))
    assert table.num_rows > 0 and set(table.column("run_id").to_pylist()) == {run_id}
    for fmt in ("gab", "bmf"):
        done = subprocess.run(
            [sys.executable, "-m", "normbench", "export", run_id, "-r", str(folder), "-f", fmt, "-o", "-"],
            cwd=tmp_path,
            env=make_child_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0 and json.loads(done.stdout), done.stderr


def test_baseline_save_refuses_a_suite_folder_that_is_a_link(results, cli, tmp_path):
    from normbench.results.baselines import machine_fingerprint, suite_folder
    from normbench.results.store import RunStore

    folder, run_id = results
    store = RunStore.open(folder, run_id)
    machine = tmp_path / "baselines" / machine_fingerprint(store.manifest["env"])
    machine.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine")
    (machine / suite_folder(store.manifest["suite"])).symlink_to(elsewhere)
    done = cli("baseline", "save", run_id, "-r", folder, "--baselines", tmp_path / "baselines")
    assert "not a folder of baselines (a link or a file)" in _one_line_error(done)
    assert [p.name for p in elsewhere.iterdir()] == ["keep.txt"]
