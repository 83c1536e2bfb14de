"""The run progress bar: current case, done/total, elapsed and an ETA. Off with --quiet or when stderr
is not a terminal: CI logs then get one line per finished case with its time, and every ETA_EVERY cases
(and on the last) the elapsed time and an ETA from the mean case time so far."""

from __future__ import annotations

import time

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from normbench.cli._common import err
from normbench.core.errors import printable


class CaseColumn(ProgressColumn):
    """The current case's label as plain text: a label is suite data, never Rich markup (`[/]` stays)."""

    def render(self, task) -> Text:
        return Text(task.fields.get("case", ""), style="bold")


ETA_EVERY = 10


def clock(seconds: float) -> str:
    """1m05s, 2h03m, 4.2s: a duration as a person reads it in a log."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}m{secs:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"


class RunProgress:
    def __init__(self, total: int, *, quiet: bool):
        self.quiet = quiet
        self.started = time.monotonic()
        self.case_started = self.started
        self.live = not quiet and err.is_terminal
        self.total = total
        self.done = 0
        self.progress = Progress(
            CaseColumn(),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=err,
            transient=False,
        )
        self.task = None

    def __enter__(self):
        if self.live:
            self.progress.start()
            self.task = self.progress.add_task("run", total=self.total, case="")
        return self

    def __exit__(self, *exc):
        if self.live:
            self.progress.stop()

    def start_case(self, case) -> None:
        self.case_started = time.monotonic()
        if self.live:
            self.progress.update(self.task, case=printable(case.short_label)[:70])

    def end_case(self, case, status: str) -> None:
        self.done += 1
        if self.live:
            self.progress.advance(self.task)
            if status != "ok":
                self.progress.console.print(printable(f"  {status}: {case.short_label}"), markup=False)
        elif not self.quiet:
            now = time.monotonic()
            line = f"[{self.done}/{self.total}] {status:<8} {clock(now - self.case_started):>6}  {case.short_label}"
            if self.done % ETA_EVERY == 0 or self.done == self.total:
                elapsed = now - self.started
                eta = elapsed / self.done * (self.total - self.done)
                line += f"  (elapsed {clock(elapsed)}, ETA {clock(eta)})"
            err.print(printable(line), markup=False)
