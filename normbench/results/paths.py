"""Path safety: run ids name a folder directly under the results folder and nothing else, and the paths a
user gives for output are checked before any work, each with a one-line error.

One rule for every output path of every command (export, report, plot, run --results): it never lands in a
stored run's folder (its manifest, lock, parts and rejected parts are the record), symlinks resolved; the
one place inside a run a command may write is its `plots/` folder, where `plot` puts figures by default."""

from __future__ import annotations

import os
import re
from pathlib import Path

from normbench.core.errors import NormbenchError, printable
from normbench.core.settings import env_setting

# One rule for every name normbench makes a folder of or looks a folder up by: run ids (given with --run-id or
# made from the suite's name), tags, the machine and suite folders of baselines. A name is typed into shells,
# CI variables and URLs: letters and digits of any script and these few marks, nothing that a shell splits,
# a path joins, `compare A,B` separates or `latest:SUITE` parses; it starts with a letter, a digit or `_`
# (never `-`, which reads as an option, nor `.`, which hides it).
NAME_MARKS = "._-+=@"
NAME_RULE = (
    "letters, digits and . _ - + = @ only, starting with a letter, digit or _ (no spaces, /, \\, :, "
    "commas, .. or control characters)"
)


def name_problem(name: object) -> str | None:
    """Why `name` cannot be a run id, a tag or a baseline folder (None: it can)."""
    if not isinstance(name, str) or not name:
        return "empty"
    if not (name[0].isalnum() or name[0] == "_"):
        return f"starts with {printable(name[0])!r}"
    bad = sorted({c for c in name if not (c.isalnum() or c in NAME_MARKS)})
    if bad:
        return "holds " + ", ".join(repr(printable(c)) for c in bad[:5])
    if ".." in name:
        return "holds '..'"
    return None


def check_run_id(run_id: str) -> str:
    """A run id is one folder name by the name rule (name_problem)."""
    if name_problem(run_id) is not None:
        raise NormbenchError(
            f"{printable(run_id)!r} is not a run id: a run id is a folder name under --results ({NAME_RULE}); "
            "`normbench list runs` shows them"
        )
    return run_id


def slug(text: object, limit: int = 40, *, lower: bool = False, default: str = "unknown") -> str:
    """A name by the name rule made from any text (a suite's name, a CPU model): every run of other
    characters becomes one '-', dots never repeat, at most `limit` characters; `default` when nothing is left."""
    out = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(text))
    out = re.sub(r"\.{2,}", ".", out).strip("-.")[:limit].strip("-.")
    out = out.lower() if lower else out
    return out if out and name_problem(out) is None else default


def results_default() -> Path:
    """The results folder when --results is not given: NORMBENCH_RESULTS (empty or blank is unset), else
    ./results."""
    return Path(env_setting("NORMBENCH_RESULTS") or "results")


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


def check_utf8_path(path: Path, option: str) -> None:
    """A path whose name is not UTF-8 (bytes Python keeps as surrogates) is refused: Arrow opens parts by a
    UTF-8 name, so every part of a run stored there would read as damaged, and `--resume` would set the
    good ones aside and rerun them."""
    try:
        os.path.abspath(path).encode("utf-8")
    except UnicodeEncodeError:
        raise NormbenchError(
            f"{option} {printable(path)}: the path is not UTF-8; runs are read by UTF-8 names: rename the "
            "folder or give another"
        ) from None


def check_results_dir(results: Path, *, create: bool) -> Path:
    """--results must be a folder (created when a run needs it) with a UTF-8 path, and a new run is never
    put inside a stored run's folder."""
    results = Path(results)
    check_utf8_path(results, "--results")
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
