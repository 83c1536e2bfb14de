"""Run names. A new run's id is `<UTC time>-<suite>[-shard<i>of<N>][-<tag>]-<random>` or the name given with
`run --run-id`; wherever a run is wanted a user may write its id, `latest` (the newest run of any suite) or
`latest:SUITE` (the newest run of suite SUITE, by its manifest's start time), and normbench.load also takes a
run folder's path (results/lookup.py opens a run by any of these)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from normbench.core.errors import NormbenchError, printable
from normbench.results.manifest import read_manifest
from normbench.results.paths import NAME_RULE, name_problem

LATEST = "latest"
MAX_NAME_BYTES = 200  # a folder name under --results: file systems allow 255 bytes; room for temporaries
MAX_TAG_BYTES = 64


def check_new_run_name(results: Path, run_id: str | None, tag: str | None, resume: str | None) -> None:
    """--run-id and --tag, checked before anything is written (one line each, exit 2 at the CLI)."""
    if resume and (run_id or tag):
        raise NormbenchError("--run-id and --tag name a new run; --resume finishes one under its own id")
    if tag is not None:
        check_name(tag, "--tag", MAX_TAG_BYTES)
    if run_id is not None:
        check_name(run_id, "--run-id", MAX_NAME_BYTES)
        if (Path(results) / run_id).exists():
            raise NormbenchError(
                f"--run-id {printable(run_id)!r}: {Path(results) / run_id} exists; choose another name "
                f"(`normbench run --resume {printable(run_id)}` finishes that run)"
            )


def check_name(name: str, option: str, max_bytes: int) -> str:
    """A run id or a part of one: the name rule (paths.name_problem), not 'latest', not too long."""
    if (problem := name_problem(name)) is not None:
        raise NormbenchError(
            f"{option} '{printable(name)}': it names a folder under --results: {NAME_RULE}; this one {problem}"
        )
    if name == LATEST:
        raise NormbenchError(f"{option} {name!r}: reserved (it means the newest run)")
    if len(name.encode()) > max_bytes:
        raise NormbenchError(f"{option}: {len(name.encode())} bytes; at most {max_bytes}")
    return name


def resolve_run_ref(results: Path, ref: str) -> str:
    """The run id that `ref` names: itself, or the newest run (of one suite, for `latest:SUITE`)."""
    if ref == LATEST:
        return latest_run_id(results)
    if ref.startswith(LATEST + ":"):
        return latest_of_suite(results, ref.split(":", 1)[1])
    return ref


def latest_of_suite(results: Path, suite: str) -> str:
    runs = [
        (m.get("started") or "", run_id) for run_id, m in run_manifests(results) if m.get("suite") == suite
    ]
    if not runs:
        known = sorted({str(m.get("suite")) for _, m in run_manifests(results) if m.get("suite")})
        raise NormbenchError(
            f"latest:{printable(suite)}: no run of suite {printable(suite)!r} in {results}/ "
            f"(suites with runs: {printable(', '.join(known)) or 'none'})"
        )
    return max(runs)[1]


def run_manifests(results: Path) -> list[tuple[str, dict[str, Any]]]:
    """(run id, manifest) of every readable run in `results`, oldest first; damaged ones are left out."""
    found = []
    for run_id in list_run_ids(results):
        try:
            found.append((run_id, read_manifest(Path(results) / run_id / "manifest.json")))
        except NormbenchError:
            continue
    return found


def is_run_path(ref: Any) -> bool:
    """A path (os.PathLike, or a string with a path separator), as opposed to a run id or `latest[:SUITE]`."""
    return isinstance(ref, os.PathLike) or (isinstance(ref, str) and ("/" in ref or os.sep in ref))


def list_run_ids(results_dir: Path) -> list[str]:
    """Run ids in results_dir, oldest first (by the start time in each manifest; a damaged manifest
    sorts first, so `latest` never lands on it by accident)."""
    runs = []
    for manifest in Path(results_dir).glob("*/manifest.json"):
        try:
            started = str(read_manifest(manifest).get("started", ""))
        except NormbenchError:
            started = ""
        runs.append((started, manifest.parent.name))
    return [name for _, name in sorted(runs)]


def latest_run_id(results_dir: Path) -> str:
    runs = list_run_ids(results_dir)
    if not runs:
        raise NormbenchError(f"no runs in {results_dir}/ yet: run `normbench run SUITE.toml` first")
    return runs[-1]
