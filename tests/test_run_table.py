"""A completed run's one-file table (_table.parquet) holds exactly its parts' rows and is what reads use; one that no longer matches the parts, is damaged or is another run's is ignored, and a run without one reads, resumes and upgrades as before."""

from __future__ import annotations

import json
import os
import shutil

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from normbench.analysis.compare.runs import COMPARE_COLUMNS
from normbench.results.schema import SCHEMA_VERSION
from normbench.results.store import RunStore, read_stores
from normbench.results.table import TABLE_NAME


@pytest.fixture
def run(tmp_path, tiny_suite, cli):
    """(results, run id) of a completed real run of 4 cases."""
    suite = tmp_path / "t.toml"
    suite.write_text(tiny_suite(name="t", sweep="tokens = [8]\nd = [16, 32]"))
    results = tmp_path / "results"
    done = cli("run", suite, "--quiet", "--threads", "1", "--results", results)
    assert done.exit_code == 0, done.output
    (run_id,) = [p.name for p in results.iterdir()]
    return results, run_id


def _from_parts(store: RunStore, monkeypatch, *args):
    """The run read from its parts alone (the table's reader made to find nothing)."""
    with monkeypatch.context() as m:
        m.setattr("normbench.results.store.read_run_table", lambda *a, **k: None)
        return store.read_table(*args)


def _no_parts_read(monkeypatch):
    """Any read of the parts fails the test from here on."""

    def refuse(*a, **k):
        raise AssertionError("the parts were read")

    monkeypatch.setattr("normbench.results.store.scan_parts", refuse)
    monkeypatch.setattr("normbench.results.store._read_parts", refuse)


def _plain(table):
    """Dictionary-encoded columns as plain values: a table and its parts chunk them differently."""
    return pa.table({n: table.column(n).to_pylist() for n in table.column_names})


def test_a_completed_run_is_read_from_its_table_with_the_parts_rows(run, monkeypatch):
    results, run_id = run
    store = RunStore.open(results, run_id)
    assert (store.path / TABLE_NAME).is_file()
    parts = _from_parts(store, monkeypatch)
    projected = _from_parts(store, monkeypatch, COMPARE_COLUMNS, ("params",))
    frame_from_parts = _frame(store, monkeypatch)
    # the file itself, read by pyarrow with no options: the parts' rows in their order, the declared types
    stored = pq.read_table(store.path / TABLE_NAME)
    assert stored.num_rows == parts.num_rows > 0 and stored.schema.equals(parts.schema)
    assert stored.cast(parts.schema).equals(parts)
    _no_parts_read(monkeypatch)
    assert store.read_table().equals(parts)
    assert store.read_table().schema.equals(parts.schema, check_metadata=True)
    got = store.read_table(COMPARE_COLUMNS, ("params",))
    assert got.schema.equals(projected.schema, check_metadata=True) and _plain(got).equals(_plain(projected))
    frame, _ = read_stores([store], COMPARE_COLUMNS)
    pd.testing.assert_frame_equal(frame, frame_from_parts)


def _frame(store, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr("normbench.results.store.read_run_table", lambda *a, **k: None)
        return read_stores([store], COMPARE_COLUMNS)[0]


def test_readers_of_the_run_folder_see_each_row_once(run):
    import pyarrow.dataset as ds

    results, run_id = run
    folder = results / run_id
    rows = sum(pq.read_metadata(p).num_rows for p in (folder / "parts").glob("*.parquet"))
    assert pq.read_metadata(folder / TABLE_NAME).num_rows == rows
    assert len(pd.read_parquet(folder / "parts")) == rows
    # the folder as a dataset: `_` names are skipped (as Parquet's _metadata), manifest.json is no Parquet
    assert ds.dataset(folder, format="parquet", exclude_invalid_files=True).count_rows() == rows


@pytest.mark.parametrize("change", ["part set aside", "part rewritten", "table damaged"])
def test_a_table_that_does_not_match_the_parts_is_ignored(run, monkeypatch, change):
    results, run_id = run
    store = RunStore.open(results, run_id)
    table = store.path / TABLE_NAME
    parts = sorted(store.parts.glob("*.parquet"))
    if change == "part set aside":
        (store.path / "rejected").mkdir()
        os.replace(parts[0], store.path / "rejected" / parts[0].name)
    elif change == "part rewritten":  # the same rows written again: a new mtime, as a rerun's part has
        rows = pq.read_table(parts[1])
        pq.write_table(rows.set_column(7, "value", pa.array([1.0] * rows.num_rows)), parts[1])
    else:  # a stretch of its pages zeroed: a checksum or a page header no longer reads
        data = bytearray(table.read_bytes())
        data[len(data) // 3 : len(data) // 3 + 256] = bytes(256)
        table.write_bytes(bytes(data))
        with pytest.raises(Exception):  # noqa: B017 - whatever pyarrow raises: the damage is seen
            pq.ParquetFile(table, page_checksum_verification=True).read()
    expected = _from_parts(store, monkeypatch)
    assert store.read_table().equals(expected)
    if change == "part set aside":
        assert parts[0].stem not in set(expected.column("case_id").to_pylist())
    if change == "part rewritten":
        assert 1.0 in expected.column("value").to_pylist()


def test_another_runs_table_is_not_read(run, monkeypatch):
    """A run copied under another id (mtimes kept): its table says another run, so it is ignored and the
    parts are read (which then name the problem)."""
    results, run_id = run
    store = RunStore.open(results, run_id)
    whole = store.read_table()
    copy = results / "20260101-000000-t-beef"
    shutil.copytree(store.path, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    (copy / "manifest.json").write_text(json.dumps({**manifest, "run_id": copy.name}))
    _no_parts_read(monkeypatch)
    assert store.read_table().equals(whole)
    with pytest.raises(AssertionError, match="the parts were read"):
        RunStore.open(results, "20260101-000000-t-beef").read_table()


def test_a_run_without_a_table_reads_resumes_and_gets_one(run, cli, monkeypatch):
    """An interrupted run (its table is written only when it completes) reads from its parts; --resume
    removes a table as it starts writing and writes it again when the run is complete."""
    results, run_id = run
    store = RunStore.open(results, run_id)
    whole = store.read_table()
    (store.path / TABLE_NAME).unlink()
    part = sorted(store.parts.glob("*.parquet"))[0]
    part.unlink()  # as if the run had been stopped before its last case
    without = store.read_table()
    assert without.num_rows < whole.num_rows and not (store.path / TABLE_NAME).exists()
    resumed = cli("run", "--resume", run_id, "--quiet", "--results", results)
    assert resumed.exit_code == 0, resumed.output
    assert (store.path / TABLE_NAME).is_file() and part.is_file()
    expected = _from_parts(store, monkeypatch)
    _no_parts_read(monkeypatch)
    assert store.read_table().equals(expected) and expected.num_rows == whole.num_rows


def test_upgrade_writes_the_table_of_a_run_that_has_none(run, cli, monkeypatch):
    results, run_id = run
    store = RunStore.open(results, run_id)
    (store.path / TABLE_NAME).unlink()
    dry = cli("upgrade", "--dry-run", run_id, "--results", results)
    assert dry.exit_code == 0 and "would write its rows as one file (_table.parquet)" in dry.output
    assert not (store.path / TABLE_NAME).exists()
    done = cli("upgrade", run_id, "--results", results)
    assert done.exit_code == 0, done.output
    assert done.output.strip() == (
        f"{store.path}: already at result schema version {SCHEMA_VERSION}; wrote its rows as one file "
        "(_table.parquet)"
    )
    again = cli("upgrade", run_id, "--results", results)
    assert again.output.strip() == f"{store.path}: already at result schema version {SCHEMA_VERSION}"
    expected = _from_parts(store, monkeypatch)
    _no_parts_read(monkeypatch)
    assert store.read_table().equals(expected)


def test_a_saved_baseline_checks_the_parts_and_keeps_a_table_that_matches_them(
    run, tmp_path, cli, monkeypatch
):
    """`baseline save` reads the parts themselves (a damaged part is refused though the table still
    matches), and its copy keeps the parts' times, so the saved run reads from its own table."""
    results, run_id = run
    store = RunStore.open(results, run_id)
    baselines = tmp_path / "baselines"
    part = sorted(store.parts.glob("*.parquet"))[0]
    good, stat = part.read_bytes(), part.stat()
    part.write_bytes(good[:-4] + b"XXXX")  # no Parquet end marker: unreadable, and of the same size
    os.utime(part, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size and time: the table still matches
    refused = cli("baseline", "save", run_id, "-r", results, "--baselines", baselines)
    assert refused.exit_code == 2 and part.name in refused.output
    part.write_bytes(good)
    os.utime(part, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    saved = cli("baseline", "save", run_id, "-r", results, "--baselines", baselines)
    assert saved.exit_code == 0, saved.output
    (copy,) = baselines.glob(f"*/*/{run_id}")
    assert (copy / TABLE_NAME).is_file()
    expected = store.read_table()
    _no_parts_read(monkeypatch)
    assert RunStore.open(copy.parent, run_id).read_table().equals(expected)
