"""Path safety: run ids name a folder directly under the results folder and nothing else, and the paths a
user gives for output are checked before any work, each with a one-line error."""

from __future__ import annotations

import os
from pathlib import Path

from normbench.core.errors import NormbenchError, printable


def check_run_id(run_id: str) -> str:
    """A run id is one folder name: no path separators, no '..', not hidden, no control characters."""
    bad = (
        not run_id
        or run_id.startswith(".")
        or ".." in run_id
        or any(sep in run_id for sep in ("/", "\\", os.sep))
        or ":" in run_id  # a Windows drive ('C:x') is a path too
        or printable(run_id) != run_id
    )
    if bad:
        raise NormbenchError(
            f"{printable(run_id)!r} is not a run id: a run id is a folder name under --results "
            "(no /, \\, .. or control characters); `normbench list runs` shows them"
        )
    return run_id


def check_results_dir(results: Path, *, create: bool) -> Path:
    """--results must be a folder (created when a run needs it)."""
    results = Path(results)
    if results.exists() and not results.is_dir():
        raise NormbenchError(f"--results {results}: not a folder")
    if create:
        try:
            results.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise NormbenchError(f"--results {results}: cannot create: {exc.strerror or exc}") from None
    return results


def check_output_dir(path: Path, option: str) -> Path:
    """An output folder: created if missing; an existing file or an unwritable place is refused."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise NormbenchError(f"{option} {path}: exists and is not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NormbenchError(f"{option} {path}: cannot create the folder: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK):
        raise NormbenchError(f"{option} {path}: folder is not writable")
    return path


def check_output_file(path: Path, option: str) -> Path:
    """An output file: its folder must exist and be writable, the path must not be a folder, and it must
    not overwrite a run's own files (its manifest, lock or parts)."""
    path = Path(path)
    parent = path.parent
    if path.is_dir():
        raise NormbenchError(f"{option} {path}: is a folder; give a file name")
    if path.name in ("manifest.json", ".lock") or parent.name in ("parts", "rejected"):
        if (parent / "manifest.json").is_file() or (parent.parent / "manifest.json").is_file():
            raise NormbenchError(f"{option} {path}: would overwrite a file of a stored run")
    if not parent.is_dir():
        raise NormbenchError(f"{option} {path}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise NormbenchError(f"{option} {path}: not writable")
    return path
