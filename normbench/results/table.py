"""A run's rows in one file, `_table.parquet` beside parts/: written when a run completes (and by `normbench
upgrade`), read instead of the parts while it matches them (each part's name, size and modification time, as
recorded in its footer). The parts stay the record; the table is derived from them, and anything unexpected
about it means the parts are read as before. Why: docs/methodology.md, "Reading large runs"."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from pathlib import Path

from normbench.results.files import atomic_write
from normbench.results.scan import scan_parts
from normbench.results.schema import SCHEMA_VERSION, arrow_schema
from normbench.results.verify import schema_metadata_problem

TABLE_NAME = "_table.parquet"  # `_`: pyarrow's and pandas' dataset readers skip it, as Parquet's _metadata
PARTS_KEY = b"normbench_parts"
BATCH = 250  # parts per row group: bounded memory while writing, few row groups to read


def parts_key(parts: list[Path]) -> str | None:
    """What the table was made from: a digest of each part's name, size and mtime (in nanoseconds), in
    order; None when a part is not a regular file (the careful read names it)."""
    digest = hashlib.sha256()
    for part in parts:
        try:
            st = os.lstat(part)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        digest.update(f"{part.name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def write_run_table(folder: Path, run_id: str, columns: dict[str, str], parts: list[Path], planned) -> bool:
    """Write the run's table from its parts (read in batches: one row group each, so memory stays that of a
    batch). False, and nothing written, when a part does not read whole and healthy: the parts are then read
    one by one, which names it."""
    import pyarrow.parquet as pq

    key = parts_key(parts)
    if key is None or not parts:
        return False
    meta = {"normbench_schema_version": str(SCHEMA_VERSION), "run_id": run_id, PARTS_KEY.decode(): key}
    schema = arrow_schema(columns, meta)

    class Unhealthy(Exception):
        pass

    def write(f) -> None:
        with pq.ParquetWriter(f, schema, write_page_checksum=True) as writer:
            for start in range(0, len(parts), BATCH):
                table = scan_parts(parts[start : start + BATCH], run_id, columns, planned)
                if table is None:
                    raise Unhealthy
                writer.write_table(table.cast(schema), row_group_size=table.num_rows)

    try:
        atomic_write(folder / TABLE_NAME, write)
    except Unhealthy:
        return False
    return parts_key(parts) == key  # a part replaced meanwhile: the table is stale, and will be ignored


def remove_table(folder: Path) -> None:
    """Before a writer changes the parts: the table then never outlives the parts it was made from."""
    path = folder / TABLE_NAME
    if path.is_file() and not path.is_symlink():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def read_run_table(
    folder: Path,
    run_id: str,
    columns: dict[str, str],
    parts: list[Path],
    planned,
    only: list[str] | None = None,
    encoded: tuple[str, ...] = (),
):
    """The run's rows from its table, exactly as scan_parts reads them from the parts (`only`: a projection;
    `encoded`: string columns left dictionary-encoded), or None when there is no table, or it was not made
    from exactly these parts, or it is not whole."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / TABLE_NAME
    if not parts or path.is_symlink() or not path.is_file():
        return None
    if planned is not None and not {p.stem for p in parts} <= planned:
        return None
    key = parts_key(parts)
    schema = arrow_schema(columns)
    read = None if only is None else list(dict.fromkeys(["case_id", "run_id", *only]))
    try:
        with pq.ParquetFile(
            path,
            page_checksum_verification=True,
            pre_buffer=True,
            read_dictionary=list(dict.fromkeys(["case_id", "run_id", *encoded])),
        ) as f:
            meta = f.metadata.metadata or {}
            if key is None or meta.get(PARTS_KEY) != key.encode() or schema_metadata_problem(meta, run_id):
                return None
            if meta.get(b"normbench_schema_version") != str(SCHEMA_VERSION).encode():
                return None
            if f.schema_arrow.names != schema.names:  # made for other columns (a manifest rewritten since)
                return None
            # row group by row group: a third of the time of one read of the whole file, and less memory
            groups = [f.read_row_group(i, columns=read, use_threads=False) for i in range(f.num_row_groups)]
            table = pa.concat_tables(groups)
    except Exception:
        return None
    if not _rows_of(table, run_id, {p.stem for p in parts}):
        return None
    table = _plain(table, ("case_id", "run_id"), encoded)
    wanted = schema if only is None else arrow_schema({c: columns[c] for c in only})
    table = table.select(wanted.names)
    if not all(
        f.type == w.type or (f.name in encoded and _encoded_as(f.type, w.type))
        for f, w in zip(table.schema, wanted, strict=True)
    ):
        return None
    return table.replace_schema_metadata(schema.metadata)


def _rows_of(table, run_id: str, cases: set[str]) -> bool:
    """Every row of this run, and the rows' cases exactly the parts' (checked on each chunk's dictionary)."""
    import pyarrow.compute as pc

    def held(name: str) -> set | None:
        out = set()
        for chunk in table.column(name).chunks:
            if chunk.null_count:
                return None
            out |= set(chunk.dictionary.take(pc.unique(chunk.indices)).to_pylist())
        return out

    return table.num_rows > 0 and held("run_id") == {run_id} and held("case_id") == cases


def _plain(table, names: tuple[str, ...], encoded: tuple[str, ...]):
    """The columns read dictionary-encoded for the checks as plain strings again, unless asked for encoded."""
    import pyarrow as pa

    for name in names:
        if name not in encoded and name in table.column_names:
            i = table.schema.get_field_index(name)
            table = table.set_column(i, name, table.column(name).cast(pa.string()))
    return table


def _encoded_as(kind, plain) -> bool:
    import pyarrow as pa

    return pa.types.is_dictionary(kind) and kind.value_type == plain


def table_matches(folder: Path, run_id: str, parts: list[Path]) -> bool:
    """Whether the run has a table made from exactly these parts (its footer alone is read)."""
    import pyarrow.parquet as pq

    path = folder / TABLE_NAME
    if not parts or path.is_symlink() or not path.is_file() or (key := parts_key(parts)) is None:
        return False
    try:
        meta = pq.read_metadata(path).metadata or {}
    except Exception:
        return False
    return meta.get(PARTS_KEY) == key.encode() and schema_metadata_problem(meta, run_id) is None
