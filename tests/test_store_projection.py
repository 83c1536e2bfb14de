"""A run read for some of its columns (compare's projection) holds exactly those columns and the same rows as
the whole read, by the one-scan path and by the careful per-part path alike."""

from __future__ import annotations

from _compare_support import store_run

from normbench.analysis.compare.runs import COMPARE_COLUMNS
from normbench.results.store import read_stores


def test_a_projection_has_the_columns_asked_and_the_rows_of_the_whole_read(tmp_path, monkeypatch):
    store = store_run(tmp_path, "20260101-a", latency={"i0": 1e-4})
    whole = store.read_table()
    only = [*dict.fromkeys(c for c in COMPARE_COLUMNS if c in whole.column_names), "not_a_column"]
    projected = store.read_table(only)
    assert projected.column_names == only[:-1] and "tokens" in whole.column_names
    assert projected.equals(whole.select(only[:-1]))
    monkeypatch.setattr("normbench.results.store.scan_parts", lambda *a, **k: None)  # the per-part path
    assert store.read_table(only).equals(projected)
    frame, _ = read_stores([store], only)
    assert list(frame.columns) == only[:-1] and len(frame) == whole.num_rows


def test_load_reads_the_columns_and_metrics_asked(tmp_path):
    import normbench

    store_run(tmp_path, "20260101-a", latency={"i0": 1e-4, "i1": 2e-4})
    whole = normbench.load("20260101-a", results=tmp_path)
    some = normbench.load("20260101-a", results=tmp_path, columns=["case_id", "value"], metrics=["time"])
    assert list(some.columns) == ["case_id", "value"]
    assert len(some) == (whole["metric"] == "time").sum() == 24
    assert sorted(some["value"]) == sorted(whole.loc[whole["metric"] == "time", "value"])


def test_parts_of_different_schemas_read_alike_by_both_paths(tmp_path, monkeypatch):
    """A part lacking a declared column (an older writer's) beside whole parts: the scan conforms each run of
    parts of one schema once, and its table equals the careful per-part read's, nulls where the column was."""
    import pyarrow.parquet as pq

    store = store_run(tmp_path, "20260101-a", latency={"i0": 1e-4, "i1": 2e-4, "i2": 3e-4})
    parts = sorted(store.parts.glob("*.parquet"))
    assert len(parts) >= 3
    middle = pq.read_table(parts[1])
    assert "tokens" in middle.column_names
    pq.write_table(middle.drop_columns(["tokens"]), parts[1], write_page_checksum=True)
    from normbench.results.scan import scan_parts

    scanned = scan_parts(parts, store.run_id, store.columns, store.planned_case_ids())
    assert scanned is not None and scanned.equals(store.read_table())  # the scan read it, not the fallback
    assert scanned.column("tokens").null_count >= pq.read_metadata(parts[1]).num_rows
    monkeypatch.setattr("normbench.results.store.scan_parts", lambda *a, **k: None)
    assert store.read_table().equals(scanned)
