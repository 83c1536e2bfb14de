"""The run progress bar: current case, done/total, elapsed and an ETA. Off with --quiet or when stderr
is not a terminal (CI logs then get one line per finished case instead)."""

from __future__ import annotations

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


class RunProgress:
    def __init__(self, total: int, *, quiet: bool):
        self.quiet = quiet
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
        if self.live:
            self.progress.update(self.task, case=printable(case.short_label)[:70])

    def end_case(self, case, status: str) -> None:
        self.done += 1
        if self.live:
            self.progress.advance(self.task)
            if status != "ok":
                self.progress.console.print(printable(f"  {status}: {case.short_label}"), markup=False)
        elif not self.quiet:
            err.print(printable(f"[{self.done}/{self.total}] {status:<8} {case.short_label}"), markup=False)
