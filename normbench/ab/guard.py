"""What `normbench ab` checks before it makes the base worktree, and how it ends: the results folder
(writable, in no stored run, the result under `.ab/`, a name no run id can take, written by exclusive
create), the --base-python interpreter (it imports torch and the worker), and a signal guard that turns the
first SIGINT or SIGTERM into StopNow, so that the children are ended and the worktree is removed in `finally`
blocks before the command exits 128 + the signal."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from normbench.ab.gate import ABResult
from normbench.core.errors import NormbenchError, printable
from normbench.core.jsondata import json_text
from normbench.results.paths import check_not_in_a_run, check_results_dir
from normbench.runner import StopAfterCase, StopNow
from normbench.timing.fresh import worker_env

# A run id starts with a letter, a digit or _ (results/paths.py): no run can be named this.
AB_FOLDER = ".ab"
PROBE_TIMEOUT_S = 300  # importing torch from a cold disk


def ab_folder(results: Path) -> Path:
    """`<results>/.ab`, created, checked writable and outside any stored run before any work."""
    results = check_results_dir(results, create=True)
    folder = results / AB_FOLDER
    check_not_in_a_run(folder, "--results", allow_outputs=False)
    try:
        folder.mkdir(exist_ok=True)
    except OSError as exc:
        raise NormbenchError(
            printable(f"--results {results}: cannot create {folder}: {exc.strerror or exc}")
        ) from None
    try:  # written to, not asked (os.access answers yes to root on a read-only mount)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        raise NormbenchError(
            printable(f"--results {results}: cannot write in {folder}: {exc.strerror or exc}")
        ) from None
    return folder


def store_exclusive(folder: Path, stem: str, result: ABResult) -> Path:
    """The result as `<stem>.json`, or `<stem>-2.json`, ...: created exclusively, never replacing another
    job's result (two jobs of one base finishing in the same second keep both)."""
    text = json_text(result.to_json(), indent=1, default=str)
    for n in range(1, 10_000):
        path = folder / (f"{stem}.json" if n == 1 else f"{stem}-{n}.json")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            continue
        except OSError as exc:
            raise NormbenchError(
                printable(f"cannot store the result in {folder}: {exc.strerror or exc}")
            ) from None
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
        except OSError as exc:
            path.unlink(missing_ok=True)
            raise NormbenchError(
                printable(f"cannot store the result as {path}: {exc.strerror or exc}")
            ) from None
        return path
    raise NormbenchError(f"cannot store the result in {folder}: every name of {stem} is taken")


def check_python(python: str) -> None:
    """--base-python must start and import torch and ab's worker (with head's normbench on its path), or
    every process would fail after the worktree is made."""
    env = worker_env()
    probe = [python, "-c", "import torch, normbench.ab.worker"]
    try:
        done = subprocess.run(probe, env=env, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        raise NormbenchError(printable(f"--base-python {python}: cannot start it ({why})")) from None
    if done.returncode:
        tail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise NormbenchError(printable(f"--base-python {python}: cannot import torch and normbench: {tail}"))


@contextmanager
def stop_on_signal(say) -> Iterator[None]:
    """The first SIGINT or SIGTERM (a CI cancel) raises StopNow where the command is, so `finally` blocks
    end the children and remove the worktree; later ones wait for that cleanup."""

    def first(signum, frame):
        for s in StopAfterCase.SIGNALS:
            signal.signal(s, later)
        say(f"{signal.Signals(signum).name}: ending ab's processes and removing the base worktree")
        raise StopNow(signum)

    def later(signum, frame):
        pass

    previous = {s: signal.signal(s, first) for s in StopAfterCase.SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
