"""A run's parts read in one Arrow dataset scan against the run's declared schema: the fast way to read a
healthy run. Every part's footer is checked first (a planned case, this run's metadata, the current result
schema, no undeclared column, some rows), and the scanned rows are checked against the parts they came
from (each part's rows of its own case and of this run). Anything unexpected returns None, and the store
reads the parts one by one, which names the part and says what is wrong with it (results/store.py)."""

from __future__ import annotations

from pathlib import Path

from normbench.results.schema import SCHEMA_VERSION, arrow_schema
from normbench.results.verify import schema_metadata_problem


def scan_parts(
    parts: list[Path],
    run_id: str,
    columns: dict[str, str],
    planned: set[str] | None,
    only: list[str] | None = None,
):
    """The parts' rows as one table with exactly `columns` (in order and type), or only the columns `only`
    names of them (a projection: the other columns are never decoded), or None when some part needs the
    careful per-part read."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    schema = arrow_schema(columns)
    if not parts:
        return (
            schema.empty_table()
            if only is None
            else arrow_schema({c: columns[c] for c in only}).empty_table()
        )
    counts = []
    for part in parts:
        if planned is not None and part.stem not in planned:
            return None
        if (
            part.is_symlink() or not part.is_file()
        ):  # a link to a pipe would hang: the careful read refuses it
            return None
        try:
            footer = pq.read_metadata(part)
            physical = footer.schema.to_arrow_schema()
        except Exception:
            return None
        meta = footer.metadata or {}
        if (
            schema_metadata_problem(meta, run_id)
            or meta.get(b"normbench_schema_version") != str(SCHEMA_VERSION).encode()
        ):
            return None
        if footer.num_rows == 0 or not set(physical.names) <= set(columns):
            return None
        counts.append(footer.num_rows)
    # page checksums verified as the per-part read does: a damaged page fails the scan, then names its part
    checked = ds.ParquetFileFormat(
        default_fragment_scan_options=ds.ParquetFragmentScanOptions(page_checksum_verification=True)
    )
    try:
        read = None if only is None else list(dict.fromkeys(["case_id", "run_id", *only]))
        table = ds.dataset([str(p) for p in parts], schema=schema, format=checked).to_table(columns=read)
    except Exception:
        return None
    if table.num_rows != sum(counts):
        return None
    # the scan keeps the parts' order: part i holds rows [sum(counts[:i]), sum(counts[:i+1]))
    owner = pa.array(np.repeat([p.stem for p in parts], counts))
    same_case = pc.all(pc.fill_null(pc.equal(table.column("case_id"), owner), False)).as_py()
    same_run = pc.all(pc.fill_null(pc.equal(table.column("run_id"), run_id), False)).as_py()
    if not (same_case and same_run):
        return None
    if only is not None:
        table = table.select(only)
    return table.replace_schema_metadata(schema.metadata)
