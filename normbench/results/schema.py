"""The tidy row schema. One row per measured value; the case's parameters are columns too (and the whole
parameter dict as JSON in `params`, so a row can be traced to its case exactly).

Details: docs/suites-and-results.md, "Results"."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from typing import Any

from normbench.core.errors import NormbenchError
from normbench.core.renames import RENAMES

SCHEMA_VERSION = 4  # 4: the encoder-decoder is its own bench kind (core/renames.py MOVES)

# {version: {bench kind: {old column: new column}}}: upgrading a run to `version` renames these columns in
# that kind's rows, and the keys of its `params` JSON (the parameters were renamed too, core/renames.py).
COLUMN_RENAMES: dict[int, dict[str, dict[str, str]]] = RENAMES

# Columns every row has, in this order; parameters and bench labels (layer, ...) follow, sorted by name.
FIXED_COLUMNS = [
    "run_id",
    "case_id",
    "bench",
    "norm",
    "impl",
    "metric",
    "unit",
    "value",
    "sample",  # index of a raw sample, null for derived values
    "step",  # training step for time series, null otherwise
    "status",  # ok | failed | skipped | unavailable | bench-specific outcomes (diverged, stuck, ...)
    "error",  # the reason when status is not ok
    "session",  # which invocation wrote the case: 0 = the first `run`, 1 = the first --resume, ...
    "params",  # the case's resolved parameters as JSON
    "node",  # hostname of the machine that ran the case
    "ray_node",  # Ray node id under --executor ray, null otherwise
]

FIXED_TYPES = {c: "string" for c in FIXED_COLUMNS} | {
    "value": "float64",
    "sample": "int64",
    "step": "int64",
    "session": "int64",
}

# Statuses that count as a failure of the run (exit code 1). skipped/unavailable are expected on some
# machines (no CUDA, no Liger); diverged/stuck are results of the stability bench, not failures.
FAILED_STATUSES = {"failed"}

RESERVED = set(FIXED_COLUMNS)

_PY_TYPES = {bool: "bool", int: "int64", float: "float64", str: "string"}


def type_name(py_type: type) -> str:
    return _PY_TYPES.get(py_type, "string")


def merge_types(a: str, b: str) -> str:
    """Two declarations of one column name: the same type, int and float (float64), else string."""
    if a == b:
        return a
    return "float64" if {a, b} == {"int64", "float64"} else "string"


def declare_columns(benches: Iterable[Any], params: Iterable[dict[str, Any]] = ()) -> dict[str, str]:
    """The run's columns {name: Arrow type} for a suite of these bench kinds (Bench objects: their `params`
    specs and `labels`, given by the caller, so the results layer needs no bench registry). `params` (the
    expanded cases' parameter dicts) adds keys that are not in any spec, typed from their values."""
    found: dict[str, str] = {}

    def add(name: str, kind: str) -> None:
        if name not in RESERVED:
            found[name] = merge_types(found[name], kind) if name in found else kind

    by_kind = {bench.kind: bench for bench in benches}
    for kind in sorted(by_kind):
        bench = by_kind[kind]
        for name, spec in bench.params.items():
            add(name, type_name(spec.type))
        for name, py_type in bench.labels.items():
            add(name, type_name(py_type))
    for p in params:
        for name, value in p.items():
            if name not in found and value is not None:
                add(name, type_name(type(value)))
    return dict(FIXED_TYPES) | {k: found[k] for k in sorted(found)}


def arrow_schema(columns: dict[str, str], metadata: dict[str, str] | None = None):
    """The Arrow schema of a part, with pandas metadata so that pandas reads int64 columns with nulls as
    Int64 (not float64) and bool columns as boolean."""
    import pyarrow as pa

    fields = [pa.field(name, pa.type_for_alias(kind)) for name, kind in columns.items()]
    pandas_meta = {
        "index_columns": [],
        "column_indexes": [],
        "columns": [
            {
                "name": name,
                "field_name": name,
                "pandas_type": {"string": "unicode", "float64": "float64"}.get(kind, kind),
                "numpy_type": {"int64": "Int64", "bool": "boolean", "string": "object"}.get(kind, kind),
                "metadata": None,
            }
            for name, kind in columns.items()
        ],
        "creator": {"library": "normbench"},
        "pandas_version": "2.0.0",
    }
    meta = {"pandas": json.dumps(pandas_meta), **(metadata or {})}
    return pa.schema(fields, metadata=meta)


def check_rows(rows: list[dict[str, Any]], columns: dict[str, str]) -> tuple[list[dict], str | None]:
    """Rows that fit the run's schema, and what did not fit: label columns the schema does not declare (a
    bench's `labels` misses them) or values of another type. The runner stores such a case as failed with
    that reason; the rest of its values are kept."""
    undeclared = sorted({k for r in rows for k in r} - set(columns))
    mistyped = sorted(
        {
            k
            for r in rows
            for k, v in r.items()
            if k in columns and k not in RESERVED and v is not None and not _fits(v, columns[k])
        }
    )
    if not undeclared and not mistyped:
        return rows, None
    drop = set(undeclared) | set(mistyped)
    problems = []
    if undeclared:
        problems.append(
            f"undeclared label column(s) {', '.join(undeclared)} (add them to the bench's `labels`)"
        )
    if mistyped:
        problems.append(", ".join(f"{k} is not {columns[k]}" for k in mistyped))
    return [{k: v for k, v in r.items() if k not in drop} for r in rows], "; ".join(problems)


def _fits(value: Any, kind: str) -> bool:
    import numbers

    if kind == "string":
        return isinstance(value, str)
    if kind == "bool":
        return type(value).__name__ in ("bool", "bool_")
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return False
    if kind == "int64":
        return isinstance(value, numbers.Integral)
    return isinstance(value, numbers.Real)


def part_table(rows: list[dict[str, Any]], columns: dict[str, str], metadata: dict[str, str]):
    """One part: the rows as an Arrow table with exactly the run's columns and types."""
    import pyarrow as pa

    schema = arrow_schema(columns, metadata)
    return pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows], schema=schema)


def conform(table, columns: dict[str, str]):
    """A table with exactly `columns`, in order and type: missing ones added as nulls (an older part, or
    a run combined with another suite's). Columns not declared are kept at the end."""
    import pyarrow as pa

    types = _arrow_types(tuple(columns.items()))
    names = table.column_names  # a new list per call: read once
    if names == list(columns) and all(f.type == t for f, t in zip(table.schema, types, strict=True)):
        return table  # a part this version wrote: already the run's columns
    present = set(names)
    out = []
    for (name, _), t in zip(columns.items(), types, strict=True):
        if name in present:
            col = table.column(name)
            out.append(col if col.type == t else col.cast(t))
        else:
            out.append(pa.nulls(table.num_rows, t))
    extra = [n for n in names if n not in columns]
    return pa.Table.from_arrays(out + [table.column(n) for n in extra], names=list(columns) + extra)


@functools.lru_cache(maxsize=64)
def _arrow_types(columns: tuple[tuple[str, str], ...]) -> list:
    import pyarrow as pa

    return [pa.type_for_alias(kind) for _, kind in columns]


def columns_of(schema) -> dict[str, str]:
    """{name: type alias} of an Arrow schema (an older part's own columns)."""
    import pyarrow as pa

    def alias(t) -> str:
        if pa.types.is_integer(t):
            return "int64"
        if pa.types.is_floating(t):
            return "float64"
        if pa.types.is_boolean(t):
            return "bool"
        return "string"

    return {f.name: alias(f.type) for f in schema}


def check_schema_version(version: Any, where: str) -> None:
    """A result schema version this normbench knows: 1 up to SCHEMA_VERSION (older ones read only by
    `normbench upgrade`, see require_current)."""
    if not isinstance(version, int) or version < 1:
        raise NormbenchError(f"{where}: not a normbench result (no schema_version)")
    if version > SCHEMA_VERSION:
        raise NormbenchError(
            f"{where}: written with result schema version {version}; this normbench reads up to "
            f"{SCHEMA_VERSION}. Upgrade normbench to read it."
        )


def require_current(version: int, where: str, run_path: Any) -> None:
    """Refuse a run (or a part) written with an older schema version, naming the command that upgrades it."""
    if version < SCHEMA_VERSION:
        raise NormbenchError(
            f"{where}: written with result schema version {version}; this normbench reads version "
            f"{SCHEMA_VERSION}: run `normbench upgrade {run_path}` (rewrites the run in place)"
        )
