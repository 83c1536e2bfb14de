"""What every command shares: the error policy (one clear message, exit 2, traceback only with
NORMBENCH_DEBUG=1), consoles, and small option parsers."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import typer
from rich.console import Console

from normbench.core.errors import NormbenchError, SuiteError, printable

err = Console(stderr=True, highlight=False, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)

RESULTS_DIR = Path(os.environ.get("NORMBENCH_RESULTS", "results"))


def debug() -> bool:
    return os.environ.get("NORMBENCH_DEBUG", "") not in ("", "0")


def cli_errors(fn):
    """Turn a NormbenchError into its message on stderr and exit code 2; an OSError nobody anticipated
    (a full disk, a permission) the same way, as `error: PATH: reason`. Control characters in messages
    (they quote file names and suite strings) are escaped."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (NormbenchError, OSError) as exc:
            if debug():
                raise
            if isinstance(exc, SuiteError):
                n = len(exc.problems)
                for line in str(exc).splitlines():
                    err.print(printable(line), markup=False)
                source = printable(exc.source)
                err.print(f"{source}: {n} problem{'s' if n != 1 else ''}; nothing was run", markup=False)
            elif isinstance(exc, OSError):
                where = f"{exc.filename}: " if exc.filename else ""
                err.print(printable(f"error: {where}{exc.strerror or exc}"), markup=False)
            else:
                err.print(printable(f"error: {exc}"), markup=False)
            err.print("(set NORMBENCH_DEBUG=1 for the traceback)", style="dim")
            raise typer.Exit(2) from None

    return wrapper


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        i, n = (int(p) for p in text.split("/"))
    except ValueError:
        raise NormbenchError(f"--shard {text!r}: expected i/N, e.g. 2/8") from None
    if not 1 <= i <= n:
        raise NormbenchError(f"--shard {text!r}: need 1 <= i <= N")
    return i, n
