"""Checks before stored files are used: a manifest's structure (one line naming the key when it is
damaged), and each part against its run (readable, a planned case, its rows of that case and run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from normbench.core.errors import NormbenchError, printable

# What a manifest's keys hold. Only run_id and schema_version are always required: the rest are checked
# when present, and `run --resume` requires the ones it needs (RESUME_KEYS).
MANIFEST_TYPES: dict[str, tuple[type, ...]] = {
    "run_id": (str,),
    "schema_version": (int,),
    "suite": (str,),
    "suite_source": (str,),
    "suite_sha256": (str,),
    "suite_text": (str,),
    "suite_includes": (dict, type(None)),
    "claims": (list,),
    "shard": (list, type(None)),
    "only": (list, type(None)),
    "started": (str,),
    "env": (dict,),
    "cases": (list,),
    "sessions": (list,),
    "status": (str,),
    "columns": (dict,),
    "nodes": (dict,),
}
RESUME_KEYS = ("suite_text", "suite_source", "cases", "sessions", "env")
_NAMES = {str: "a string", int: "an integer", dict: "an object", list: "a list", type(None): "null"}


def read_manifest(path: Path) -> dict[str, Any]:
    """A manifest, its structure checked: a damaged one is one line naming the file and the key."""
    try:
        manifest = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NormbenchError(f"{path}: unreadable manifest: {exc}") from None
    if not isinstance(manifest, dict):
        raise NormbenchError(f"{path}: damaged manifest: expected an object, found {type(manifest).__name__}")
    from normbench.results.store import check_schema_version

    check_schema_version(manifest.get("schema_version"), str(path))
    problem = manifest_problem(manifest, Path(path).parent.name)
    if problem:
        raise NormbenchError(printable(f"{path}: damaged manifest: {problem}"))
    return manifest


def manifest_problem(m: dict[str, Any], folder: str, required: tuple[str, ...] = ("run_id",)) -> str | None:
    for key in required:
        if key not in m:
            return f"'{key}' is missing"
    for key, types in MANIFEST_TYPES.items():
        if key in m and (not isinstance(m[key], types) or isinstance(m[key], bool)):
            expected = " or ".join(_NAMES[t] for t in types)
            return f"'{key}' must be {expected}, found {type(m[key]).__name__}"
    if m["run_id"] != folder:
        return f"run_id {m['run_id']!r} does not match its folder {folder!r} (renamed or edited?)"
    for key, item_key in (("cases", "case_id"), ("sessions", None)):
        for j, item in enumerate(m.get(key) or []):
            if not isinstance(item, dict) or (item_key and not isinstance(item.get(item_key), str)):
                return f"'{key}[{j}]' is malformed"
    for key in ("shard", "only", "claims"):
        if m.get(key) is not None and key != "shard" and not all(isinstance(v, str) for v in m[key]):
            return f"'{key}' must be a list of strings"
    shard = m.get("shard")
    if shard is not None and (len(shard) != 2 or not all(type(v) is int and v >= 1 for v in shard)):
        return "'shard' must be [i, N]"
    return None


def part_problem(part: Path, run_id: str, planned: set[str] | None) -> str | None:
    """Why a part cannot be used (None if it can): not a planned case, unreadable, or rows of another
    case or run. Reads the footer and two columns only."""
    import pyarrow.parquet as pq

    if planned is not None and part.stem not in planned:
        return "not a case of this run (a foreign file in parts/)"
    try:
        table = pq.read_table(part, columns=["run_id", "case_id"])
    except Exception as exc:
        return f"unreadable ({type(exc).__name__}: {' '.join(str(exc).split())})"
    return rows_problem(table, part, run_id, planned)


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
