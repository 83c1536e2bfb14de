"""The one rule for every file a command writes for the user (export -o, report -o, plot's figures, and through
results/files.py the run's own files): decided before any work, from what is at the path now.

Details: docs/suites-and-results.md, "Results"."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from normbench.core.errors import NormbenchError, printable
from normbench.results.files import atomic_write
from normbench.results.paths import check_not_in_a_run

STDOUT = "-"


@dataclass(frozen=True)
class Output:
    """Where and how one output is written: to stdout, in place (a device or pipe), or by replacing
    `target` (the path itself, or the regular file a link at the path points to)."""

    path: Path | None  # None: standard output
    option: str
    how: str  # "stdout" | "in_place" | "replace"
    target: Path | None = None

    def __str__(self) -> str:
        return STDOUT if self.path is None else str(self.path)


def _refuse(option: str, path: Path, why: str) -> NormbenchError:
    return NormbenchError(printable(f"{option} {path}: {why}"))


def output_file(path: Path | str, option: str, *, binary: bool = False) -> Output:
    """Decide how `path` will be written (see the module docstring); refuse it with one line if it cannot be."""
    if str(path) == STDOUT:
        if binary and sys.stdout.isatty():
            raise NormbenchError(
                f"{option} -: a binary format would go to the terminal; redirect it or give a file"
            )
        return Output(None, option, "stdout")
    path = Path(path)
    try:
        st = os.stat(path)  # through every link, as opening it would go
    except FileNotFoundError:
        if path.is_symlink():
            raise _refuse(option, path, "is a link to nothing; remove it or give another name") from None
        return _new_file(path, option)
    except OSError as exc:
        raise _refuse(option, path, f"cannot use it ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise _refuse(option, path, "is a folder; give a file name")
    check_not_in_a_run(path, option)
    if not stat.S_ISREG(st.st_mode):  # a device, pipe or socket: written in place
        if not os.access(path, os.W_OK):
            raise _refuse(option, path, "not writable")
        return Output(path, option, "in_place", path)
    real = Path(os.path.realpath(path))
    if _open_descriptor(path) or not _same_file(real, st):
        # a file this process already has open (/dev/stdout -> /proc/self/fd/1 -> the file the shell
        # redirected to): written in place as the shell's redirection is; a rename would leave the shell's
        # descriptor on the old file
        return Output(path, option, "in_place", path)
    if not os.access(real.parent, os.W_OK) or not os.access(real, os.W_OK):
        raise _refuse(option, path, "not writable")
    return Output(path, option, "replace", real)


_DESCRIPTOR = re.compile(r"/(proc/[^/]+/fd|dev/fd)/[0-9]+|/dev/std(in|out|err)")


def _open_descriptor(path: Path) -> bool:
    """Whether `path` leads, link by link, through one of this process's open descriptors."""
    current = os.path.abspath(path)
    for _ in range(40):  # the kernel's own limit on links in a row
        if _DESCRIPTOR.fullmatch(current):
            return True
        if not os.path.islink(current):
            return False
        current = os.path.abspath(os.path.join(os.path.dirname(current), os.readlink(current)))
    return False


def _same_file(real: Path, st: os.stat_result) -> bool:
    try:
        other = os.stat(real)
    except OSError:
        return False
    return (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino)


def _new_file(path: Path, option: str) -> Output:
    parent = path.parent
    check_not_in_a_run(path, option)
    if not parent.is_dir():
        raise _refuse(option, path, f"folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise _refuse(option, path, "not writable")
    return Output(path, option, "replace", path)


def write_output(out: Output, write: Callable[[BinaryIO], None]) -> None:
    """write(f) fills the output as `out` decided; any OS error while writing is one line (exit 2)."""
    try:
        if out.how == "stdout":
            stream = sys.stdout.buffer
            sys.stdout.flush()  # what was printed before goes first
            write(stream)
            stream.flush()
        elif out.how == "in_place":
            with open(out.path, "wb") as f:  # the node exists: no new file, and a device ignores truncation
                write(f)
        else:
            atomic_write(out.target, write)
    except BrokenPipeError:
        _silence_stdout()
        raise NormbenchError(f"{out.option} {out}: the reader closed the pipe before the end") from None
    except OSError as exc:
        raise NormbenchError(printable(f"{out.option} {out}: cannot write ({exc.strerror or exc})")) from None


def write_output_text(out: Output, text: str) -> None:
    write_output(out, lambda f: f.write(text.encode()))


def _silence_stdout() -> None:
    """After a closed pipe, Python's own flush at exit would fail again and print a traceback."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
