"""A validated suite (`Suite`) and its [[bench]] tables (`BenchSpec`): what load.py builds, expand.py
turns into cases, and the run stores."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from normbench.core.case import Case


@dataclass
class BenchSpec:
    """One validated [[bench]] table: which (norm, impl) pairs, the sweep lists and the fixed params."""

    index: int
    kind: str
    label: str
    norm_impls: list[tuple[str | None, str | None]]
    sweep: dict[str, list[Any]]
    params: dict[str, Any]
    timeout_s: float | None = None  # per case; the bench's own, else the suite's `timeout_s`
    # Its cases, expanded once while the suite is validated (a bench's `identity` may hash a corpus), then
    # passed along: includes, `validate`, `list suites` and `run` read these instead of expanding again.
    cases: list[Case] | None = field(default=None, repr=False, compare=False)


@dataclass
class Suite:
    name: str
    description: str
    source: str
    text: str
    benches: list[BenchSpec]
    claims: list[str] = field(default_factory=list)
    threads: int | None = None  # torch CPU threads for the run (--threads overrides); None = torch's default
    includes: dict[str, str] = field(default_factory=dict)  # path -> text of every included suite
    pages: str | None = (
        None  # CPU page state, huge or base (--pages overrides); None = timing/pages.py's default
    )
    processes: int | None = (
        None  # fresh processes per CPU timing case (--processes overrides); None = default
    )

    @property
    def sha256(self) -> str:
        blob = self.text + "".join(f"\0{k}\0{v}" for k, v in sorted(self.includes.items()))
        return hashlib.sha256(blob.encode()).hexdigest()
