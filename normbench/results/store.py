"""The run store. results/<run_id>/ holds manifest.json (suite text and hash, environment, the cases
planned) and parts/<case_id>.parquet, one per finished case, each written to a unique temporary name,
fsynced and renamed (results/files.py), so a killed run leaves only whole parts. A part is used only after
it is verified against the manifest: readable, named after a planned case, its rows of that case and run.
Paths come from the folder a run was opened from, never from file content."""

from __future__ import annotations

import json
import os
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from normbench.core.errors import NormbenchError, printable
from normbench.core.jsondata import json_text
from normbench.results.files import atomic_write, atomic_write_text
from normbench.results.manifest import read_manifest
from normbench.results.naming import list_run_ids, resolve_run_ref
from normbench.results.paths import check_run_id, check_utf8_path, slug
from normbench.results.scan import scan_parts
from normbench.results.schema import (
    SCHEMA_VERSION,
    arrow_schema,
    check_schema_version,
    conform,
    part_table,
    require_current,
)
from normbench.results.table import read_run_table, write_run_table
from normbench.results.verify import metadata_problem, part_problem, read_part, rows_problem, table_version


def new_run_id(suite_name: str, shard: tuple[int, int] | None = None, tag: str | None = None) -> str:
    """<UTC time>-<suite>[-shard<i>of<N>][-<tag>]-<random>; the tag is checked by results/naming.py."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    name = slug(suite_name, 40, default="suite")
    suffix = f"-shard{shard[0]}of{shard[1]}" if shard else ""
    suffix += f"-{tag}" if tag else ""
    return f"{stamp}-{name}{suffix}-{os.urandom(2).hex()}"


class RunStore:
    def __init__(self, path: Path, manifest: dict[str, Any]):
        self.path = path
        self.manifest = manifest

    @property
    def run_id(self) -> str:
        return self.path.name  # the folder, never the manifest's text (checked equal on open)

    @property
    def parts(self) -> Path:
        return self.path / "parts"

    # -- creating and opening ------------------------------------------------------------------------
    @classmethod
    def create(
        cls, results_dir: Path, manifest: dict[str, Any], columns: dict[str, str] | None = None
    ) -> RunStore:
        """A new run. Its columns (results/schema.py declare_columns) come in the manifest's `columns` or
        as `columns`: the results layer knows no bench kinds, so the caller declares them."""
        manifest = {"schema_version": SCHEMA_VERSION, **manifest}
        if columns is not None:
            manifest["columns"] = columns
        if "columns" not in manifest:
            raise ValueError("RunStore.create: declare the run's columns (results/schema.py declare_columns)")
        path = Path(results_dir) / check_run_id(manifest["run_id"])
        try:
            (path / "parts").mkdir(parents=True, exist_ok=False)
        except OSError as exc:
            raise NormbenchError(f"cannot create {path}: {exc.strerror or exc}") from None
        store = cls(path, manifest)
        store._write_manifest()
        return store

    @classmethod
    def open(cls, results_dir: Path, run_id: str) -> RunStore:
        results_dir = Path(results_dir)
        if results_dir.exists() and not results_dir.is_dir():
            raise NormbenchError(f"--results {results_dir}: not a folder")
        check_utf8_path(results_dir, "--results")
        run_id = resolve_run_ref(results_dir, run_id)  # latest, latest:SUITE
        path = results_dir / check_run_id(run_id)
        manifest_path = path / "manifest.json"
        if not manifest_path.is_file():
            known = ", ".join(list_run_ids(results_dir)[-3:]) or "none"
            raise NormbenchError(f"no run {run_id!r} in {results_dir}/ (latest runs: {printable(known)})")
        return cls(path, read_manifest(manifest_path))

    def _write_manifest(self) -> None:
        atomic_write_text(self.path / "manifest.json", json_text(self.manifest, indent=2, default=str))

    def update_manifest(self, **fields: Any) -> None:
        self.manifest.update(fields)
        self._write_manifest()

    # -- verifying -----------------------------------------------------------------------------------
    def planned_case_ids(self) -> set[str] | None:
        """The case ids the manifest plans, or None for a manifest without a case list."""
        cases = self.manifest.get("cases")
        return None if cases is None else {c["case_id"] for c in cases}

    def finished_case_ids(self) -> set[str]:
        """Parts named after a planned case (cheap: names only; verify_parts reads them)."""
        planned = self.planned_case_ids()
        return {p.stem for p in self.parts.glob("*.parquet") if planned is None or p.stem in planned}

    def verify_parts(self, say=print) -> set[str]:
        """Case ids whose parts are whole and belong to this run. A bad part (truncated, another run's,
        not a planned case) is moved aside to rejected/ with a message, so its case runs again. A run of an
        older result schema is refused first (`--resume` would write new parts beside old ones)."""
        self.require_current()
        good = set()
        planned = self.planned_case_ids()
        for part in sorted(self.parts.glob("*.parquet")):
            reason = part_problem(part, self.run_id, planned)
            if reason is None:
                good.add(part.stem)
                continue
            rejected = self.path / "rejected"
            rejected.mkdir(exist_ok=True)
            target = rejected / part.name
            while target.exists():
                target = rejected / f"{part.stem}.{os.urandom(2).hex()}.parquet"
            os.replace(part, target)
            say(f"moved {printable(part)} aside to {printable(target)}: {reason}")
        return good

    # -- writing -------------------------------------------------------------------------------------

    def write_case(self, case, rows: list[dict[str, Any]], status: str, error: str | None) -> Path:
        """Write one case's rows as a Parquet part (atomically). A case with no rows still gets one
        row (metric null) so its status and reason are stored."""
        import pyarrow.parquet as pq

        _refuse_standin()
        base = {
            "run_id": self.run_id,
            "case_id": case.case_id,
            "bench": case.kind,
            "norm": case.norm,
            "impl": case.impl,
            "status": status,
            "error": error,
            "params": json.dumps(case.params, sort_keys=True),
        }
        table_rows = []
        for row in rows or [{"metric": None, "unit": None, "value": None}]:
            full = {**base, "sample": None, "step": None, **row}
            full.update({k: v for k, v in case.params.items() if k not in full})
            table_rows.append(full)
        meta = {"normbench_schema_version": str(SCHEMA_VERSION), "run_id": self.run_id}
        table = part_table(table_rows, self.columns, meta)
        final = self.parts / f"{case.case_id}.parquet"
        # page checksums: a part damaged later fails verification instead of reading as other numbers
        atomic_write(final, lambda f: pq.write_table(table, f, write_page_checksum=True))
        return final

    # -- reading -------------------------------------------------------------------------------------
    def require_current(self) -> None:
        """Refuse a run written with an older result schema: one line naming `normbench upgrade`."""
        require_current(self.manifest["schema_version"], str(self.path / "manifest.json"), self.path)

    @property
    def columns(self) -> dict[str, str]:
        """The run's declared columns {name: Arrow type}, from the manifest (a current run always has them)."""
        self.require_current()
        return self.manifest["columns"]

    def read_table(
        self,
        only: tuple[str, ...] | list[str] | None = None,
        encoded: tuple[str, ...] = (),
        from_parts: bool = False,
    ):
        """All rows of this run as one Arrow table with the run's columns (parts read from disk). A part
        that is unreadable, foreign (not a planned case, or rows of another run or case) is refused by name
        with the command that moves it aside and reruns it. A healthy run is read in one dataset scan
        (results/scan.py), or from its one-file table while that matches the parts (results/table.py); the
        parts one by one only when the scan finds something to name. `only`: just
        these columns (those the run declares), every part still checked whole. `encoded`: string columns
        the scan may return dictionary-encoded (results/scan.py; to_frame reads either). `from_parts`: the
        parts even where the table matches them (a check of the parts themselves: baselines/)."""
        import pyarrow as pa

        columns = self.columns
        tables = []
        planned = self.planned_case_ids()
        parts = sorted(self.parts.glob("*.parquet"))
        wanted = None if only is None else [c for c in dict.fromkeys(only) if c in columns]
        whole = (
            None
            if from_parts
            else read_run_table(self.path, self.run_id, columns, parts, planned, wanted, encoded)
        )
        if whole is not None:
            return whole
        if (scanned := scan_parts(parts, self.run_id, columns, planned, wanted, encoded)) is not None:
            return scanned
        for part, table in zip(parts, _read_parts(parts, self.remedy), strict=True):
            if (reason := rows_problem(table, part, self.run_id, planned)) is not None:
                raise NormbenchError(printable(f"{part}: {reason}; {self.remedy(part)}"))
            version = table_version(table)  # a damaged value reads as 0: "not a normbench result"
            check_schema_version(version, str(part))
            if (reason := metadata_problem(table, self.run_id)) is not None:  # what resume checks too
                raise NormbenchError(printable(f"{part}: {reason}; {self.remedy(part)}"))
            require_current(version, str(part), self.path)  # an upgrade interrupted before this part
            tables.append(conform(table, columns).replace_schema_metadata(None))
        schema = arrow_schema(columns)
        if wanted is not None:
            schema = arrow_schema({c: columns[c] for c in wanted})
            tables = [t.select(wanted) for t in tables]
        if not tables:
            return schema.empty_table()
        return pa.concat_tables(tables, promote_options="permissive").replace_schema_metadata(schema.metadata)

    def write_table(self) -> bool:
        """Write the run's rows in one file from its parts as they are now (results/table.py), so later reads
        open one file, not one per case; False when a part is not healthy (nothing written)."""
        parts = sorted(self.parts.glob("*.parquet"))
        return write_run_table(self.path, self.run_id, self.columns, parts, self.planned_case_ids())

    def remedy(self, part: Path) -> str:
        """The commands that set a bad part aside: `run --resume` (which reruns its case), and for a run that
        cannot resume (its recorded case ids no longer expand: a run of an older normbench) a plain move
        into rejected/, after which the run reads without that case."""
        rejected = shlex.quote(str(self.path / "rejected"))
        return (
            f"`normbench run --resume {self.run_id} --results {self.path.parent}` moves it aside, reruns it; "
            f"if the run cannot resume, `mkdir -p {rejected} && mv {shlex.quote(str(part))} {rejected}/` "
            "sets it aside"
        )

    def read(self):
        """All rows of this run as one DataFrame (parts are read from disk, never from memory)."""
        return _frame_of([self.read_table()])


def _refuse_standin() -> None:
    """Rows timed under the tests' CPU stand-in of the CUDA API (it sets torch.cuda.normbench_standin) are no
    GPU results: they are never stored, so never reported or compared as such."""
    torch = sys.modules.get("torch")
    if torch is not None and getattr(getattr(torch, "cuda", None), "normbench_standin", False) is True:
        raise NormbenchError(
            "a CUDA stand-in is in force (tests/cuda_standin.py): its rows are no GPU results"
        )


def to_frame(table):
    """pandas with the declared types: int64 as Int64 and bool as boolean (nullable), so a parameter that
    is null for another bench kind's rows stays an integer. Strings are pandas' `str` kept in Python objects:
    the same dtype and missing values as its Arrow-backed default, but every row filter (the analyses make
    thousands) takes a string column with numpy, not one Arrow compute call per column (3x on a wide run).
    Each distinct string is one Python object shared by its rows (docs/methodology.md, "Reading large runs")."""
    return _frame_of([table])


def _frame_of(held: list):
    """to_frame of the one table in `held`, taken out of it: the nullable and string columns one by one, each
    let go once converted, so where nothing else holds the table the frame replaces it in memory rather than
    adds to it; the float columns in one conversion (one block: the analyses' row filters cost per block)."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    table = held.pop()
    names, rows = table.column_names, table.num_rows
    mapping = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    together = [f.name for f in table.schema if f.type not in mapping and not _is_string(f.type)]
    frame = table.select(together).to_pandas(ignore_metadata=True) if together else None
    table = table.drop_columns(together)
    dtype = pd.StringDtype("python", na_value=np.nan)
    out = {}
    pool = pa.default_memory_pool()
    for i, name in enumerate(table.column_names):
        column = table.column(name)
        table = table.drop_columns([name])
        if i % 8 == 0:
            pool.release_unused()  # what the columns converted so far held goes back to the system
        if _is_string(column.type):
            out[name] = _shared_strings(column, dtype)
        else:
            one = pa.table({name: column})
            out[name] = one.to_pandas(types_mapper=mapping.get, ignore_metadata=True)[name].array
        del column
    rest = pd.DataFrame(out, index=pd.RangeIndex(rows), copy=False)
    frame = rest if frame is None else pd.concat([frame, rest], axis=1)  # no copy of either (copy on write)
    return frame[names] if list(frame.columns) != names else frame


def _is_string(kind) -> bool:
    import pyarrow as pa

    return kind == pa.string() or (pa.types.is_dictionary(kind) and kind.value_type == pa.string())


def _same_types(tables):
    """Tables whose columns of one name have one type: a column the scan left dictionary-encoded back to
    plain strings where another run's table (read part by part) holds it plain."""
    import pyarrow as pa

    kinds = {}
    for t in tables:
        for f in t.schema:
            kinds.setdefault(f.name, set()).add(f.type)
    mixed = {n for n, k in kinds.items() if len(k) > 1 and any(pa.types.is_dictionary(x) for x in k)}
    out = []
    for t in tables:
        for name in mixed & set(t.column_names):
            if pa.types.is_dictionary(t.schema.field(name).type):
                i = t.schema.get_field_index(name)
                t = t.set_column(i, name, t.column(name).cast(pa.string()))
        out.append(t)
    return out


def _shared_strings(column, dtype):
    """A string column as pandas `str` whose rows point at one Python object per distinct value: a run's
    ids, statuses and `params` repeat over thousands of rows, and one object per row was most of the memory
    of reading a large run."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    from pandas.arrays import StringArray

    if pa.types.is_dictionary(column.type):  # per chunk (a part): its few values, then its rows' indices
        return _decoded(column, dtype)
    distinct = pc.unique(column)
    index = pc.index_in(column, value_set=distinct).to_numpy(zero_copy_only=False)
    values = np.asarray(distinct.to_pylist(), dtype=object)
    values[pc.is_null(distinct).to_numpy(zero_copy_only=False)] = np.nan
    return StringArray(values[index] if len(index) else values[:0], dtype=dtype)


def _decoded(column, dtype):
    """A dictionary-encoded string column as pandas `str`: each chunk's values made Python objects once."""
    import numpy as np
    from pandas.arrays import StringArray

    pieces = []
    for chunk in column.chunks:
        values = np.asarray([*chunk.dictionary.to_pylist(), np.nan], dtype=object)
        values[[v is None for v in values]] = np.nan
        index = chunk.indices.fill_null(len(values) - 1).to_numpy(zero_copy_only=False)
        pieces.append(values[index])
    rows = np.concatenate(pieces) if pieces else np.empty(0, dtype=object)
    return StringArray(rows, dtype=dtype)


def _read_parts(parts: list[Path], hint):
    """The parts' tables in order, a few read at once (Parquet decoding releases the GIL; one small part
    is mostly per-file overhead, which threads overlap). The first bad part in order raises."""
    from concurrent.futures import ThreadPoolExecutor

    if len(parts) < 8:
        yield from (_read_part(p, hint(p)) for p in parts)
        return
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        yield from pool.map(lambda p: _read_part(p, hint(p)), parts)


def _read_part(part: Path, hint: str = ""):
    if part.is_symlink() or not part.is_file():  # a link to a pipe or a device would hang or lie
        text = f"{part}: not a regular file (a link or a device in parts/)" + (f"; {hint}" if hint else "")
        raise NormbenchError(printable(text))
    try:
        return read_part(part)
    except Exception as exc:
        reason = " ".join(str(exc).split())  # pyarrow's messages may end in a newline: keep one line
        text = f"{part}: unreadable result part ({type(exc).__name__}: {reason})" + (
            f"; {hint}" if hint else ""
        )
        raise NormbenchError(printable(text)) from None


def read_runs(results_dir: Path, run_ids: list[str]):
    """Rows of several runs (shards of one sweep, say) as one DataFrame, and their manifests. Runs of
    different suites combine by column name (a column one run lacks is null in its rows)."""
    return read_stores([RunStore.open(results_dir, r) for r in run_ids or ["latest"]])


def read_stores(stores: list[RunStore], only: tuple[str, ...] | list[str] | None = None, metrics=None):
    """The rows of opened runs as one DataFrame, and their manifests (see read_runs); `only`: just these
    columns; `metrics`: just the rows of these metrics (filtered in Arrow, before pandas holds them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    tables = _same_types([s.read_table(only, encoded=("params",)) for s in stores])
    if metrics is not None:
        wanted = pa.array(list(metrics), pa.string())
        tables = [t.filter(pc.fill_null(pc.is_in(t["metric"], value_set=wanted), False)) for t in tables]
    held = [pa.concat_tables(tables, promote_options="permissive")]
    del tables  # the frame is made column by column from `held` alone (_frame_of)
    return _frame_of(held), [s.manifest for s in stores]
