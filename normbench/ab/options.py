"""What `normbench ab` is asked, checked when the options are made, before any work (as compare's
CompareOptions): the gate's own options (--factor, -k, --threads, --base-python, the second look), what it
times (--only, the deterministic benches, --all-cases) and how the answer is shown."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from normbench.core.errors import NormbenchError
from normbench.core.settings import check_number
from normbench.core.verdicts import DEFAULT_FACTOR
from normbench.results.paths import results_default
from normbench.suite.validate import MAX_PROCESSES

FORMATS = ("github", "plain", "md", "json")  # no csv: ab's answer is not one record per row
DEFAULT_PROCESSES = 5


@dataclass
class ABOptions:
    factor: float = DEFAULT_FACTOR
    processes: int = DEFAULT_PROCESSES
    threads: int | None = None  # None: the suite's `threads`, else torch's choice
    base_python: str | None = None  # another interpreter for the base side: alternating processes
    # The second look: cases still ? after k processes are timed in k more (those cases only), once; each
    # is then judged on its 2k processes. Bounded: at most 2k processes time any case.
    second_look: bool = True
    only: list[str] | None = None  # the cases whose label matches (suite/expand.py's select)
    deterministic: bool = True  # also run the suite's deterministic benches at base and head
    all_cases: bool = False  # also time the cases whose norms' code is the same at base and head
    results: Path = field(default_factory=results_default)
    fmt: str = "github"
    everything: bool = False  # list unchanged cases too
    markdown: Path | None = None  # also write the pull-request comment here
    bisect: bool = False  # exit 125 instead of 3 (git bisect run: skip)

    def __post_init__(self) -> None:
        check_number(self.factor, "--factor", above=1.0)
        check_number(self.processes, "--processes", at_least=1, at_most=MAX_PROCESSES)
        if self.threads is not None:
            check_number(self.threads, "--threads", at_least=1)
        if self.fmt not in FORMATS:
            raise NormbenchError(f"--format {self.fmt!r}: one of {', '.join(FORMATS)}")

    @property
    def stat(self) -> str:
        """The per-process statistic: the median of the per-round ratios head/base; with --base-python,
        whose sides run in separate processes, the ratio of their fastest samples (noise only adds time)."""
        return "min" if self.base_python else "paired"
