"""A run's parts read in one pass against the run's declared schema: the fast way to read a healthy run.
Each part is opened once: its footer checked (a planned case, this run's metadata, the current result
schema, no undeclared column, some rows), then just the wanted columns read, and the rows are checked
against the parts they came from (each part's rows of its own case and of this run). Anything unexpected returns None, and the store
reads the parts one by one, which names the part and says what is wrong with it (results/store.py)."""

from __future__ import annotations

from pathlib import Path

from normbench.results.schema import SCHEMA_VERSION, arrow_schema, conform
from normbench.results.verify import schema_metadata_problem


def scan_parts(
    parts: list[Path],
    run_id: str,
    columns: dict[str, str],
    planned: set[str] | None,
    only: list[str] | None = None,
    encoded: tuple[str, ...] = (),
):
    """The parts' rows as one table with exactly `columns` (in order and type), or only the columns `only`
    names of them (a projection: the other columns are never decoded), or None when some part needs the
    careful per-part read. `encoded`: string columns kept dictionary-encoded as Parquet stores them (one
    value per part, such as `params`, is then held once per part, not once per row)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    schema = arrow_schema(columns)
    if not parts:
        return (
            schema.empty_table()
            if only is None
            else arrow_schema({c: columns[c] for c in only}).empty_table()
        )
    read = None if only is None else list(dict.fromkeys(["case_id", "run_id", *only]))
    want = schema if read is None else arrow_schema({c: columns[c] for c in read})
    tables, last = [], {}
    for part in parts:
        if (table := _checked_part(part, run_id, planned, columns, read, encoded, last)) is None:
            return None
        tables.append(table.replace_schema_metadata(None))
    counts = [t.num_rows for t in tables]
    try:
        table = _conformed_runs(tables, {f: columns[f] for f in want.names}, encoded)
    except Exception:  # a column that does not cast to its declared type: the careful read names it
        return None
    # each part's rows of its own case: part i holds rows [sum(counts[:i]), sum(counts[:i+1]))
    owner = pa.array(np.repeat([p.stem for p in parts], counts))
    same_case = pc.all(pc.fill_null(pc.equal(table.column("case_id"), owner), False)).as_py()
    same_run = pc.all(pc.fill_null(pc.equal(table.column("run_id"), run_id), False)).as_py()
    if not (same_case and same_run):
        return None
    if only is not None:
        table = table.select(only)
    return table.replace_schema_metadata(schema.metadata)


def _conformed_runs(tables: list, wanted: dict[str, str], encoded: tuple[str, ...]):
    """The parts' tables as one, conformed: consecutive parts of one schema (all parts one version wrote)
    joined first and conformed once, not once per part."""
    import pyarrow as pa

    out, start = [], 0
    for i in range(1, len(tables) + 1):
        if i == len(tables) or not tables[i].schema.equals(tables[start].schema):
            out.append(_conformed(pa.concat_tables(tables[start:i]), wanted, encoded))
            start = i
    return pa.concat_tables(out)


def _conformed(table, wanted: dict[str, str], encoded: tuple[str, ...]):
    """conform (results/schema.py), the `encoded` string columns left dictionary-encoded."""
    import pyarrow as pa

    kind = pa.dictionary(pa.int32(), pa.string())
    names = [c for c in encoded if c in wanted and wanted[c] == "string"]
    kept = {c: table.column(c) for c in names if c in table.column_names}
    out = conform(table.drop_columns(list(kept)), wanted)
    for name in names:
        col = kept.get(name)
        col = pa.nulls(out.num_rows, kind) if col is None else col if col.type == kind else col.cast(kind)
        out = out.set_column(out.schema.get_field_index(name), name, col)
    return out.replace_schema_metadata(None)


def _checked_part(
    part: Path, run_id: str, planned: set[str] | None, columns: dict[str, str], read, encoded=(), last=None
):
    """One part's rows (`read`: just these columns of it), or None when its footer is not what a healthy
    part of this run holds. One open serves the footer checks and the read (a dataset scan opened every file
    twice and held far more memory than the rows: docs/methodology.md, "Reading large runs"); page checksums
    are verified as the per-part read does, so a damaged page fails here and then names its part. `last`:
    the previous part's footer schema and column names, reused when this part's schema equals it."""
    import pyarrow.parquet as pq

    if planned is not None and part.stem not in planned:
        return None
    if part.is_symlink() or not part.is_file():  # a link to a pipe would hang: the careful read refuses it
        return None
    try:
        with pq.ParquetFile(
            part, page_checksum_verification=True, pre_buffer=True, read_dictionary=list(encoded) or None
        ) as f:
            footer = f.metadata
            last = {} if last is None else last
            if last.get("schema") is None or not footer.schema.equals(last["schema"]):
                last.update(schema=footer.schema, names=set(f.schema_arrow.names))
            names = last["names"]
            meta = footer.metadata or {}
            if (
                schema_metadata_problem(meta, run_id)
                or meta.get(b"normbench_schema_version") != str(SCHEMA_VERSION).encode()
            ):
                return None
            if footer.num_rows == 0 or not names <= columns.keys():
                return None
            present = None if read is None else [c for c in read if c in names]
            table = f.read(columns=present, use_threads=False)
    except Exception:
        return None
    return table if table.num_rows == footer.num_rows else None
