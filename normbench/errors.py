"""Errors a user can act on. The CLI prints them without a traceback and exits 2
(NORMBENCH_DEBUG=1 shows the traceback)."""

from __future__ import annotations

from dataclasses import dataclass


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
    """Every problem found in one suite file, reported together."""

    def __init__(self, source: str, problems: list[Problem]):
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {p}" for p in problems))


class SkipCase(Exception):
    """Raised by a bench when a case cannot run here (no CUDA, dtype unsupported); recorded as skipped."""


class UnavailableCase(Exception):
    """Raised when an optional implementation is not installed; recorded as unavailable with the reason."""
