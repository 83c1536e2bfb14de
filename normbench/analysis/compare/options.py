"""What `normbench compare` is asked, checked when the options are made, before any run is read: the gate's
own options (CompareOptions: what decides a change) and the command's (CompareRunsOptions: the runs'
folder, the output format, what to show). Light: the command imports it at start-up."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from normbench.core.errors import NormbenchError
from normbench.core.settings import check_number
from normbench.core.verdicts import DEFAULT_FACTOR

FORMATS = ("github", "plain", "md", "csv", "json")


@dataclass
class CompareOptions:
    """What decides a change; every number is checked when the options are made (nan, 0 or a negative
    alpha would switch the gate off: refused, one line)."""

    factor: float = DEFAULT_FACTOR
    alpha: float = 0.002
    allow_env: set[str] = field(default_factory=set)  # environment fields allowed to differ
    allow_load: bool = False  # compare cases timed while the load exceeded the core count
    absolute: bool = False  # also gate the benches' absolute times (Bench.absolute_metrics)
    # gate only what holds across jobs: no timing metric (paired or absolute); statuses still compare
    deterministic_only: bool = False

    def __post_init__(self) -> None:
        check_number(self.factor, "--factor", above=1.0)
        check_number(self.alpha, "--alpha", above=0.0, below=1.0)
        if self.deterministic_only and self.absolute:
            raise NormbenchError("--deterministic-only gates no time: drop --absolute")


@dataclass
class CompareRunsOptions:
    """The command's options: where the runs are, how the answer is shown, and the gate's own (`gate`)."""

    results: Path
    fmt: str = "github"
    gate: CompareOptions = field(default_factory=CompareOptions)
    only_changed: bool = False
    allow_incomparable: bool = False
    baseline: bool = False  # the base is the new run's saved baseline
    baselines: Path | None = None
    any_machine: bool = False

    def __post_init__(self) -> None:
        if self.fmt not in FORMATS:
            raise NormbenchError(f"--format {self.fmt!r}: one of {', '.join(FORMATS)}")
