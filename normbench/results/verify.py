"""Checks before stored parts are used: each part against its run (readable, a planned case, its rows of
that case and run). The manifest's own checks are in results/manifest.py."""

from __future__ import annotations

from pathlib import Path

from normbench.results.schema import SCHEMA_VERSION


def read_part(part: Path):
    """The whole part: every column chunk and data page decoded, page checksums verified where the part
    has them (every part this version writes does), so a damaged page fails here and not in `report`."""
    import pyarrow.parquet as pq

    # ParquetFile.read, not pq.read_table: one small file needs no dataset machinery (half the time a part);
    # pre_buffer reads its column chunks in one request, no threads inside one small file (read_parts
    # reads several parts at once instead)
    with pq.ParquetFile(part, page_checksum_verification=True, pre_buffer=True) as f:
        return f.read(use_threads=False)


def part_problem(part: Path, run_id: str, planned: set[str] | None) -> str | None:
    """Why a part cannot be used (None if it can): not a planned case, unreadable (any column chunk or
    page), schema metadata that is not a normbench part of this run, or rows of another case or run."""
    return checked_part(part, run_id, planned)[1]


def checked_part(part: Path, run_id: str, planned: set[str] | None):
    """(the part's table, None) when it can be used, else (None or the table, why not): one read serves the
    checks and whatever the caller does with the rows next (its version is in the same table's metadata)."""
    if planned is not None and part.stem not in planned:
        return None, "not a case of this run (a foreign file in parts/)"
    if part.is_symlink() or not part.is_file():
        return None, "not a regular file (a link or a device in parts/): normbench reads only its own files"
    try:
        table = read_part(part)
    except Exception as exc:
        return None, f"unreadable ({type(exc).__name__}: {' '.join(str(exc).split())})"
    return table, metadata_problem(table, run_id) or rows_problem(table, part, run_id, planned)


def table_version(table) -> int:
    """The result schema version a part's table carries in its metadata (0: none, or not a number)."""
    raw = (table.schema.metadata or {}).get(b"normbench_schema_version", b"0")
    return int(raw) if raw.isdigit() else 0


def metadata_problem(table, run_id: str) -> str | None:
    """The schema metadata every part carries: a result schema version this normbench reads, and (from
    version 2 on) the run it was written for."""
    return schema_metadata_problem(table.schema.metadata or {}, run_id)


def schema_metadata_problem(meta: dict, run_id: str) -> str | None:
    """metadata_problem for a part's key-value metadata alone (its footer, read without its rows)."""
    version = meta.get(b"normbench_schema_version", b"")
    if not version.isdigit() or not 1 <= int(version) <= SCHEMA_VERSION:
        shown = version.decode(errors="replace")[:20] or "none"
        return f"schema metadata: result schema version {shown!r} is not one this normbench reads"
    held = meta.get(b"run_id")
    if held is not None and held != run_id.encode():
        return f"schema metadata: written for run {held.decode(errors='replace')[:80]}, not {run_id}"
    return None


def rows_problem(table, part: Path, run_id: str, planned: set[str] | None) -> str | None:
    if planned is not None and part.stem not in planned:
        return "not a case of this run (a foreign file in parts/)"
    if table.num_rows == 0:
        return "holds no rows"
    if "run_id" not in table.column_names or "case_id" not in table.column_names:
        return "has no run_id/case_id columns"
    runs = set(table.column("run_id").to_pylist())
    cases = set(table.column("case_id").to_pylist())
    if runs != {run_id}:
        return f"its rows belong to run {', '.join(map(str, sorted(runs, key=str)))}, not {run_id}"
    if cases != {part.stem}:
        return f"its rows are of case {', '.join(map(str, sorted(cases, key=str)))}, not {part.stem}"
    return None
