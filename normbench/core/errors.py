"""Errors a user can act on. The CLI prints them without a traceback and exits 2
(NORMBENCH_DEBUG=1 shows the traceback)."""

from __future__ import annotations

import os
from dataclasses import dataclass

DEBUG_ON = ("1", "true", "yes", "on")


class NormbenchError(Exception):
    """A problem with the user's input or files, explained in the message."""


@dataclass(frozen=True)
class Problem:
    """One validation problem: where (a key path such as bench[1].sweep.dtype[0]) and what."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class SuiteError(NormbenchError):
    """Every problem found in one suite file, reported together; `nested`: the errors of files it includes,
    reported with it (each line names its own file)."""

    def __init__(self, source: str, problems: list[Problem], nested: list[SuiteError] = ()):
        self.source = source
        self.problems = [*problems, *(p for e in nested for p in e.problems)]
        lines = [*(str(e) for e in nested), *(f"{source}: {p}" for p in problems)]
        super().__init__("\n".join(lines))


class SkipCase(Exception):
    """Raised by a bench when a case cannot run here (no CUDA, dtype unsupported); recorded as skipped."""


class UnavailableCase(Exception):
    """Raised when an optional implementation is not installed; recorded as unavailable with the reason."""


class CaseTimeout(BaseException):
    """Raised in the main thread when a case exceeds its `timeout_s`. A BaseException, so a bench's own
    `except Exception` cannot swallow it; the runner stores the case as failed and goes on."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        super().__init__(f"timed out after {seconds:g} s")


# Control characters (ESC starts terminal escape sequences) and bidirectional overrides, which can make
# printed text differ from the bytes behind it.
_UNPRINTABLE = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x20), *range(0x7F, 0xA0))}
_UNPRINTABLE.update({c: f"\\u{c:04x}" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))})


def printable(text: object, *, keep_newlines: bool = False) -> str:
    """`text` with control characters written as escapes (\\x1b), so suite strings, file names and error
    messages cannot move the cursor, recolour or rewrite the terminal."""
    table = dict(_UNPRINTABLE)
    if keep_newlines:
        table.pop(0x0A)
    return str(text).translate(table)


def debug_enabled() -> bool:
    """NORMBENCH_DEBUG=1 (or true, yes, on): tracebacks are shown. 0, false, no, off or unset: one line."""
    return os.environ.get("NORMBENCH_DEBUG", "").strip().lower() in DEBUG_ON
