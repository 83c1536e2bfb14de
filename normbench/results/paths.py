"""Path safety: run ids name a folder directly under the results folder and nothing else, and the paths a
user gives for output are checked before any work, each with a one-line error.

One rule for every output path of every command (export, report, plot, run --results): it never lands in a
stored run's folder (its manifest, lock, parts and rejected parts are the record), symlinks resolved; the
one place inside a run a command may write is its `plots/` folder, where `plot` puts figures by default."""

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


# What a run folder may hold that a command writes (besides the run's own files, which only the store writes).
OUTPUT_SUBFOLDERS = ("plots",)


def stored_run_holding(path: Path) -> Path | None:
    """The stored run folder (one holding manifest.json and parts/) that `path` is in or is, symlinks
    resolved, or None."""
    real = Path(os.path.realpath(path))
    for folder in (real, *real.parents):
        if (folder / "manifest.json").is_file() and (folder / "parts").exists():
            return folder
    return None


def check_not_in_a_run(path: Path, option: str, *, allow_outputs: bool = True) -> None:
    """Refuse an output path inside a stored run (its files are the record), except under its plots/."""
    run = stored_run_holding(path)
    if run is None:
        return
    inside = Path(os.path.realpath(path)).relative_to(run).parts
    if allow_outputs and inside and inside[0] in OUTPUT_SUBFOLDERS:
        return
    raise NormbenchError(
        printable(
            f"{option} {path}: would write inside stored run {run.name} ({run}), whose files are the run's "
            "record; write somewhere else"
        )
    )


def check_results_dir(results: Path, *, create: bool) -> Path:
    """--results must be a folder (created when a run needs it), and a new run is never put inside a
    stored run's folder."""
    results = Path(results)
    if results.exists() and not results.is_dir():
        raise NormbenchError(f"--results {results}: not a folder")
    if create:
        check_not_in_a_run(results, "--results", allow_outputs=False)
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
    check_not_in_a_run(path, option)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NormbenchError(f"{option} {path}: cannot create the folder: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK):
        raise NormbenchError(f"{option} {path}: folder is not writable")
    return path


def check_output_file(path: Path, option: str) -> Path:
    """An output file: its folder must exist and be writable, the path must not be a folder, and it must
    not be in a stored run (check_not_in_a_run)."""
    path = Path(path)
    parent = path.parent
    if path.is_dir():
        raise NormbenchError(f"{option} {path}: is a folder; give a file name")
    check_not_in_a_run(path, option)
    if not parent.is_dir():
        raise NormbenchError(f"{option} {path}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise NormbenchError(f"{option} {path}: not writable")
    return path
