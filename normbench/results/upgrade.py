"""Rewrite a run written with an older result schema in place, as asv's `asv update` does: every part
that is older is read, its columns renamed (results/schema.py COLUMN_RENAMES) and its rows of a moved kind
relabelled (core/renames.py MOVES), conformed to the run's current columns and written back atomically (temporary file, fsync, rename: results/files.py); the
manifest goes last. A run interrupted half-way keeps its old manifest version, so the store refuses it
until the next `normbench upgrade`, which finishes it; an upgraded run is left as it is.

A version-1 run declares no columns: the caller (cli/upgrade.py) passes `declare_v1`, which re-expands the
run's stored suite (suite/columns.py), as the results layer knows no suites or bench kinds."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from normbench.core.errors import NormbenchError, printable
from normbench.core.jsondata import json_text
from normbench.core.renames import MOVES, moved, renamed
from normbench.results.files import atomic_write, atomic_write_text, check_no_writer
from normbench.results.schema import (
    COLUMN_RENAMES,
    FIXED_COLUMNS,
    SCHEMA_VERSION,
    arrow_schema,
    conform,
    merge_types,
)
from normbench.results.store import RunStore
from normbench.results.table import TABLE_NAME, table_matches
from normbench.results.verify import checked_part, table_version
from normbench.results.writing import writing

# (the run's manifest, its part files) -> its columns as a version-2 run would have declared them
DeclareV1 = Callable[[dict[str, Any], list[Path]], dict[str, str]]


@dataclass
class Upgrade:
    """What upgrading one run does: its version, the parts to rewrite, the parts left alone and why."""

    path: Path
    version: int
    columns: dict[str, str]  # the run's current columns
    rewrite: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "part: reason" of parts that cannot be read

    @property
    def needed(self) -> bool:
        return self.version < SCHEMA_VERSION or bool(self.rewrite)


def plan_upgrade(store: RunStore, declare_v1: DeclareV1 | None = None) -> Upgrade:
    """The upgrade of one opened run (nothing written). Each part is read once: checked, and its version
    taken from that same read."""
    m = store.manifest
    version = m["schema_version"]
    planned = store.planned_case_ids()
    parts, rewrite, skipped = [], [], []
    for part in sorted(store.parts.glob("*.parquet")):
        table, reason = checked_part(part, store.run_id, planned)
        if reason is not None:
            skipped.append(f"{part.name}: {reason}")
            continue
        parts.append(part)
        if table_version(table) < SCHEMA_VERSION:
            rewrite.append(part)
    if version >= SCHEMA_VERSION:
        return Upgrade(store.path, version, m["columns"], rewrite, skipped)
    if "columns" in m:
        old = dict(m["columns"])
    elif declare_v1 is not None:
        old = declare_v1(m, parts)
    else:
        raise NormbenchError(f"{store.path}: a version-1 run needs its suite re-expanded to upgrade")
    return Upgrade(store.path, version, upgraded_columns(old, parts, version), rewrite, skipped)


def upgraded_columns(old: dict[str, str], parts: list[Path], since: int = 0) -> dict[str, str]:
    """The current columns of a run that declared `old`: each renamed column's new name is declared; the
    old name stays only where a bench kind that keeps it has values there (stability's `warmup`); a
    parameter a moved kind dropped (core/renames.py MOVES) stays only where another row still has it. `since`:
    the run's version (what changed after it)."""
    import pyarrow.parquet as pq

    columns = dict(old)
    moved_names = {old: new for kind in _renaming_kinds() for old, new in renamed(kind, since).items()}
    for old_name, new in moved_names.items():
        if old_name in columns:
            kind = columns[old_name]
            columns[new] = merge_types(columns[new], kind) if new in columns else kind
    dropped = {k for v in MOVES if v > since for move in MOVES[v] for k in (*move.dropped, *move.left)}
    still_used: set[str] = set()
    gone: set[str] = set()  # the moved kind's parameters some row had (a run older than them has none)
    for part in parts:
        names = [n for n in ("bench", *moved_names, *dropped) if n in pq.read_schema(part).names]
        table = pq.read_table(part, columns=names).to_pylist()
        for row in table:
            keeps = set(moved_names) - set(renamed(row.get("bench") or "", since))
            out = set(moved(row.get("bench") or "", row, since)[1])
            gone |= out
            still_used |= {n for n in keeps | (dropped - out) if row.get(n) is not None}
    for name in (set(moved_names) | gone) - still_used:
        columns.pop(name, None)
    rest = sorted(k for k in columns if k not in FIXED_COLUMNS)
    return {k: columns[k] for k in FIXED_COLUMNS if k in columns} | {k: columns[k] for k in rest}


def _renaming_kinds() -> set[str]:
    return {kind for step in COLUMN_RENAMES.values() for kind in step}


def upgraded_part(table, columns: dict[str, str], run_id: str):
    """One part's table as today's version: the renamed columns and `params` keys of its bench kind, its rows of
    a moved kind relabelled, the run's columns. Its version is read from the table itself (the same read as
    its rows)."""
    import pyarrow as pa

    version = table_version(table)
    kinds = set(table.column("bench").to_pylist()) if "bench" in table.column_names else set()
    for kind in kinds:
        for old, new in renamed(kind, since=version).items():
            if old in table.column_names:
                values = table.column(old)
                if new in table.column_names:
                    table = table.drop_columns([new])
                table = table.drop_columns([old]).append_column(new, values)
        if "params" in table.column_names:
            table = table.set_column(
                table.column_names.index("params"),
                "params",
                pa.array([_renamed_params(p, kind, version) for p in table.column("params").to_pylist()]),
            )
    table = _moved_rows(table, version)
    table = conform(table, columns).select(list(columns))
    meta = {"normbench_schema_version": str(SCHEMA_VERSION), "run_id": run_id}
    return table.cast(arrow_schema(columns, meta))


def _moved_rows(table, version: int):
    """Rows of a kind that moved since `version` (core/renames.py MOVES): the new kind in `bench`, and the
    parameters it lacks out of `params` and their columns, as a run of the new kind stores them."""
    import pyarrow as pa

    if "bench" not in table.column_names or "params" not in table.column_names:
        return table
    benches, texts = table.column("bench").to_pylist(), table.column("params").to_pylist()
    columns = {}
    for i, (kind, text) in enumerate(zip(benches, texts, strict=True)):
        params = json.loads(text) if text else {}
        benches[i], drop = moved(kind or "", params, since=version)
        if not drop:
            continue
        texts[i] = json.dumps({k: v for k, v in params.items() if k not in drop}, sort_keys=True)
        for name in drop:
            if name in table.column_names:
                columns.setdefault(name, table.column(name).to_pylist())[i] = None
    changed = {"bench": benches, "params": texts, **columns}
    for name, values in changed.items():
        index = table.column_names.index(name)
        table = table.set_column(index, name, pa.array(values, type=table.schema.field(name).type))
    return table


def _renamed_params(text: str | None, kind: str, since: int) -> str | None:
    if text is None:
        return None
    names = renamed(kind, since=since)
    params = {names.get(k, k): v for k, v in json.loads(text).items()}
    return json.dumps(params, sort_keys=True)  # as RunStore.write_case writes it


def upgraded_manifest(m: dict[str, Any], columns: dict[str, str]) -> dict[str, Any]:
    """The manifest as today's version: its columns, and the case labels under the new names."""
    out = {**m, "schema_version": SCHEMA_VERSION, "columns": columns}
    if m.get("cases"):
        out["cases"] = [{**c, "label": _renamed_label(c.get("label"))} for c in m["cases"]]
    return {"schema_version": SCHEMA_VERSION, **{k: v for k, v in out.items() if k != "schema_version"}}


def _renamed_label(label: Any) -> Any:
    """A stored Case.label (core/case.py) with each old parameter name (core/renames.py) as today's, and the
    kind and parameters of a moved case: 'latency layernorm:module tokens=8 <old>=16' -> '... d=16'."""
    if not isinstance(label, str):
        return label
    words = label.split(" ")
    names = renamed(words[0])
    words = [
        f"{names[w.partition('=')[0]]}={w.partition('=')[2]}"
        if "=" in w and w.partition("=")[0] in names
        else w
        for w in words
    ]
    kind, drop = moved(words[0], dict(w.split("=", 1) for w in words if "=" in w))
    return " ".join([kind, *(w for w in words[1:] if w.partition("=")[0] not in drop)])


def upgrade_run(
    store: RunStore, declare_v1: DeclareV1 | None = None, *, dry_run: bool = False, say=print
) -> str:
    """Upgrade one run in place (parts first, each read back and checked, the manifest last) under the
    run's lock, then write its rows as one file (results/table.py) where it has none that matches its
    parts, and say what was done, in one line. A second upgrade or a `run --resume` meanwhile is refused
    with the pid that holds the run."""
    plan = plan_upgrade(store, declare_v1)
    if not plan.needed and not _wants_table(store, plan):
        return _said(store, plan, dry_run)
    if dry_run:
        check_no_writer(store.path, store.run_id, "upgrading it")
        return _said(store, plan, dry_run, table=not plan.skipped)
    with writing(store, say, doing="upgrading it") as fresh:
        plan = plan_upgrade(fresh, declare_v1)  # again under the lock: another writer may have gone first
        if plan.needed:
            for part in plan.rewrite:
                _rewrite(part, plan.columns, fresh.run_id)
            manifest = upgraded_manifest(fresh.manifest, plan.columns)
            atomic_write_text(fresh.path / "manifest.json", json_text(manifest, indent=2, default=str))
            fresh.manifest = manifest
        table = not plan.skipped and fresh.write_table()
    store.manifest = fresh.manifest
    return _said(store, plan, dry_run, table=table)


def _wants_table(store: RunStore, plan: Upgrade) -> bool:
    """A current run whose parts all read, without a one-file table made from them."""
    parts = sorted(store.parts.glob("*.parquet"))
    return bool(parts) and not plan.skipped and not table_matches(store.path, store.run_id, parts)


def _said(store: RunStore, plan: Upgrade, dry_run: bool, table: bool = False) -> str:
    where = printable(str(store.path))
    skipped = (
        f"; left {len(plan.skipped)} unreadable part(s) as they are ({plan.skipped[0]})"
        if plan.skipped
        else ""
    )
    wrote = f"; {'would write' if dry_run else 'wrote'} its rows as one file ({TABLE_NAME})" if table else ""
    if not plan.needed:
        return f"{where}: already at result schema version {SCHEMA_VERSION}{wrote}{skipped}"
    doing = "would upgrade" if dry_run else "upgraded"
    return (
        f"{where}: {doing} from result schema version {plan.version} to {SCHEMA_VERSION} "
        f"({len(plan.rewrite)} part(s) rewritten){wrote}{skipped}"
    )


def _rewrite(part: Path, columns: dict[str, str], run_id: str) -> None:
    """Read the part once (rows and version together), write it as today's version, read it back: a part that
    does not read back whole, current and with the run's columns stops the upgrade before the manifest."""
    import pyarrow.parquet as pq

    table, reason = checked_part(part, run_id, None)
    if reason is not None:
        raise NormbenchError(printable(f"{part}: {reason}; nothing more was upgraded"))
    new = upgraded_part(table, columns, run_id)
    atomic_write(part, lambda f: pq.write_table(new, f, write_page_checksum=True))
    back, reason = checked_part(part, run_id, None)
    problem = reason or (
        f"reads back as version {table_version(back)}"
        if table_version(back) != SCHEMA_VERSION
        else "reads back with other rows or columns"
        if back.num_rows != table.num_rows or back.column_names != list(columns)
        else None
    )
    if problem:
        raise NormbenchError(
            printable(
                f"{part}: rewritten but {problem}; the manifest is unchanged, run `normbench upgrade` again"
            )
        )
