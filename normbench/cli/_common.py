"""What every command shares: the error policy (one clear message, exit 2, traceback only with
NORMBENCH_DEBUG=1), consoles, and small option parsers."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import typer
from rich.console import Console

from normbench.errors import NormbenchError, SuiteError

err = Console(stderr=True, highlight=False, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)

RESULTS_DIR = Path(os.environ.get("NORMBENCH_RESULTS", "results"))


def debug() -> bool:
    return os.environ.get("NORMBENCH_DEBUG", "") not in ("", "0")


def cli_errors(fn):
    """Turn a NormbenchError into its message on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except NormbenchError as exc:
            if debug():
                raise
            if isinstance(exc, SuiteError):
                n = len(exc.problems)
                for line in str(exc).splitlines():
                    err.print(line, markup=False)
                err.print(f"{exc.source}: {n} problem{'s' if n != 1 else ''}; nothing was run", markup=False)
            else:
                err.print(f"error: {exc}", markup=False)
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
