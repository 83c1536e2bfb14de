"""The run progress bar: current case, done/total of the whole run (a resumed run counts what it had),
elapsed and what is left (cli/_eta.py: each case weighted by what it is, from the stored runs when they
know it). Off with --quiet or when stderr is not a terminal: CI logs then get one line per finished case
with its status and time, and every ETA_EVERY cases (and on the last) the elapsed time and the ETA.
A case's label is one line, cut with '…' to the terminal's width, never wrapped."""

from __future__ import annotations

import time

from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TimeElapsedColumn
from rich.table import Column
from rich.text import Text

from normbench.benches import all_benches
from normbench.cli._common import err
from normbench.cli._eta import Estimate
from normbench.core.case import Case
from normbench.core.errors import printable
from normbench.results.history import CaseHistory

ETA_EVERY = 10
# every status a built-in bench stores ("unavailable" is the longest): the log's status column fits them
STATUSES = ("ok", "failed", "skipped", "unavailable", "stuck", "diverged")
STATUS_WIDTH = max(map(len, STATUSES))
BAR_WIDTH = 16
BAR_ROOM = 48  # what the bar, the counts, elapsed and the ETA take beside the label on one line


def clock(seconds: float) -> str:
    """1m05s, 2h03m, 4.2s: a duration as a person reads it in a log."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}m{secs:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"


def case_label(case: Case) -> str:
    """The swept parameters (Case.short_label); a case that sweeps none is named by its parameters that
    differ from its bench kind's defaults, so that no two lines of a log read the same."""
    if case.swept:
        return printable(case.short_label)
    spec = all_benches().get(case.kind)
    defaults = {k: p.default for k, p in spec.params.items()} if spec else {}
    own = [f"{k}={v}" for k, v in case.params.items() if k not in defaults or defaults[k] != v]
    return printable(" ".join([case.short_label.strip(), *own]))


class CaseColumn(ProgressColumn):
    """The current case's label as plain text (suite data, never Rich markup: `[/]` stays), on one line,
    cut with '…' to the room the other columns leave."""

    def __init__(self):
        super().__init__(table_column=Column(no_wrap=True, overflow="ellipsis"))

    def render(self, task) -> Text:
        label = task.fields.get("case", "")
        room = max(16, err.width - BAR_ROOM)
        if len(label) > room:
            label = label[: room - 1] + "…"
        return Text(label, style="bold", no_wrap=True, overflow="ellipsis")


class EtaColumn(ProgressColumn):
    """'ETA 1m05s' from the weighted estimate; it counts down while a long case runs."""

    def __init__(self, estimate: Estimate):
        super().__init__()
        self.estimate = estimate

    def render(self, task) -> Text:
        return Text(f"ETA {clock(self.estimate.remaining())}", style="progress.remaining")


class RunProgress:
    """Progress of one session: `cases` are the ones it runs, `finished` how many of the run were done
    before it (a resumed run), `history` the stored runs' case times."""

    def __init__(
        self,
        cases: list[Case],
        *,
        quiet: bool,
        finished: int = 0,
        history: CaseHistory | None = None,
    ):
        self.quiet = quiet
        self.started = time.monotonic()
        self.case_started = self.started
        self.last_end: float | None = None  # a case's wall for the ETA: from the last one's end (writing too)
        self.live = not quiet and err.is_terminal
        self.total = finished + len(cases)
        self.done = finished
        self.estimate = Estimate(cases, history)
        self.progress = Progress(
            CaseColumn(),
            BarColumn(bar_width=BAR_WIDTH),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            EtaColumn(self.estimate),
            console=err,
            transient=False,
        )
        self.task = None

    def __enter__(self):
        if self.live:
            self.progress.start()
            self.task = self.progress.add_task("run", total=self.total, completed=self.done, case="")
        return self

    def __exit__(self, *exc):
        if self.live:
            self.progress.stop()

    def start_case(self, case) -> None:
        self.case_started = time.monotonic()
        if self.last_end is None:
            self.last_end = self.case_started
        self.estimate.start(case)
        if self.live:
            self.progress.update(self.task, case=case_label(case))

    def end_case(self, case, status: str) -> None:
        now = time.monotonic()
        self.done += 1
        self.estimate.finish(case, now - (self.case_started if self.last_end is None else self.last_end))
        self.last_end = now
        if self.live:
            self.progress.advance(self.task)
            if status != "ok":
                self.progress.console.print(f"  {status}: {case_label(case)}", markup=False)
        elif not self.quiet:
            line = log_line(self.done, self.total, status, now - self.case_started, case_label(case))
            if self.done % ETA_EVERY == 0 or self.done == self.total:
                line += f"  (elapsed {clock(now - self.started)}, ETA {clock(self.estimate.remaining(now))})"
            err.print(line, markup=False)


def log_line(done: int, total: int, status: str, seconds: float, label: str) -> str:
    """'[3/117] unavailable   0.0s  latency layernorm:apex ...': the columns line up for every status."""
    return f"[{done}/{total}] {status:<{STATUS_WIDTH}} {clock(seconds):>6}  {label}"
