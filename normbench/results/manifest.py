"""The run manifest (results/<run>/manifest.json): what was planned, on which machine, in which sessions.

`Manifest` declares its keys once: `run` builds one, `RunStore.create` writes `to_dict()`, and every reader
goes through `read_manifest`, which checks the structure (a damaged file is one line naming the key). Keys
are optional except run_id and schema_version, so manifests written by older versions still read; keys this
version does not know are kept (`extra`) and written back unchanged."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from normbench.core.errors import NormbenchError, printable
from normbench.results.schema import FIXED_TYPES, check_schema_version


@dataclass
class Manifest:
    run_id: str
    suite: str | None = None  # the suite's name
    tag: str | None = None  # `run --tag`: also part of the run id
    suite_source: str | None = None  # the file it was read from
    suite_sha256: str | None = None  # of its text and every included text
    suite_text: str | None = None  # the text itself: --resume runs this, not the file as it is now
    suite_includes: dict[str, str] | None = None  # path -> text of every included suite
    claims: list[str] | None = None
    shard: list[int] | None = None  # [i, N] of --shard i/N
    only: list[str] | None = None  # the --only patterns
    started: str | None = None  # ISO time of the first session
    env: dict[str, Any] | None = None  # results/env.py fingerprint
    cases: list[dict[str, Any]] | None = None  # {case_id, label} of every case this run plans
    sessions: list[dict[str, Any]] | None = None  # one per `run` / `run --resume` invocation
    columns: dict[str, str] | None = None  # the run's declared schema (results/schema.py)
    status: str | None = None  # running | complete | interrupted
    nodes: dict[str, Any] | None = None  # Ray node id -> its fingerprint (executors/ray.py)
    overrides: list[str] | None = None  # built-in names a plugin replaced (run --allow-override)
    schema_version: int | None = None  # set by RunStore.create
    extra: dict[str, Any] = field(default_factory=dict)  # keys this version does not know

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        known = {f.name for f in fields(cls)} - {"extra"}
        return cls(
            **{k: v for k, v in data.items() if k in known},
            extra={k: v for k, v in data.items() if k not in known},
        )

    @classmethod
    def read(cls, path: Path) -> Manifest:
        """A manifest file, its structure checked (read_manifest)."""
        return cls.from_dict(read_manifest(path))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: every key that is set (a run writes shard/only/suite_includes even when null)."""
        names = [
            "schema_version",
            *(f.name for f in fields(self) if f.name not in ("schema_version", "extra")),
        ]
        out = {name: getattr(self, name) for name in names}  # schema_version first, as RunStore.create writes
        nullable = {"shard", "only", "suite_includes"} if self.suite_text is not None else set()
        out = {k: v for k, v in out.items() if v is not None or k in nullable}
        return out | self.extra


# What a manifest's keys hold. Only run_id and schema_version are always required: the rest are checked
# when present, and `run --resume` requires the ones it needs (RESUME_KEYS).
MANIFEST_TYPES: dict[str, tuple[type, ...]] = {
    "run_id": (str,),
    "schema_version": (int,),
    "suite": (str,),
    "tag": (str,),
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
    "overrides": (list,),
}
COLUMN_TYPES = ("string", "float64", "int64", "bool")  # the Arrow types a run's columns are declared as
RESUME_KEYS = ("suite_text", "suite_source", "cases", "sessions", "env")  # what `run --resume` needs
_NAMES = {str: "a string", int: "an integer", dict: "an object", list: "a list", type(None): "null"}


def read_manifest(path: Path) -> dict[str, Any]:
    """A manifest, its structure checked: a damaged one is one line naming the file and the key."""
    try:
        manifest = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NormbenchError(f"{path}: unreadable manifest: {exc}") from None
    except RecursionError:  # JSON nested thousands deep: no manifest normbench wrote
        raise NormbenchError(f"{path}: unreadable manifest: JSON nested too deeply") from None
    if not isinstance(manifest, dict):
        raise NormbenchError(f"{path}: damaged manifest: expected an object, found {type(manifest).__name__}")
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
    for key in ("shard", "only", "claims", "overrides"):
        if m.get(key) is not None and key != "shard" and not all(isinstance(v, str) for v in m[key]):
            return f"'{key}' must be a list of strings"
    columns = m.get("columns") or {}
    for name, kind in columns.items():
        if kind not in COLUMN_TYPES:
            return f"'columns.{name}' must be one of {', '.join(COLUMN_TYPES)}, found {kind!r}"[:300]
        # the columns every row has are the result schema's, whatever a manifest says: a `value` declared a
        # string would turn every number into text (and the tables into a type error)
        if name in FIXED_TYPES and kind != FIXED_TYPES[name]:
            return f"'columns.{name}' is declared {kind}; the result schema's {name} is {FIXED_TYPES[name]}"
    shard = m.get("shard")
    if shard is not None and (len(shard) != 2 or not all(type(v) is int and v >= 1 for v in shard)):
        return "'shard' must be [i, N]"
    return None
