"""What is left of a run, in seconds: each case's expected time, weighted by what it is. From the stored
runs when they hold it (the same case's time, else its implementation's or its kind's mean:
results/history.py), else a rough prior per bench kind (PRIOR_S; a training kind's scaled by its steps
and depth). As the session goes on, each kind's expectations are scaled by how
this session's cases of that kind compare with theirs (the machine may be faster or busier today), the
other kinds by the session's overall pace."""

from __future__ import annotations

import time

from normbench.core.case import Case
from normbench.results.history import CaseHistory

# Seconds per case on an idle 2-core VM (quick suite): only their proportions matter once a case has run
PRIOR_S = {"latency": 1.5, "block": 2.5, "jacobian": 0.3, "init": 2.5, "stability": 16.0}
PRIOR_OTHER_S = 1.0
TRAINING_KINDS = ("stability",)  # their prior is for 40 steps of a 4-layer model


def prior_seconds(case: Case) -> float:
    seconds = PRIOR_S.get(case.kind, PRIOR_OTHER_S)
    if case.kind in TRAINING_KINDS:
        steps = case.params.get("steps") or 40
        depth = case.params.get("depth") or 4
        seconds *= (steps / 40) * (depth / 4)
    return seconds


class Estimate:
    """The expected seconds of each case still to run, and of the whole rest of the session."""

    def __init__(self, cases: list[Case], history: CaseHistory | None = None):
        history = history or CaseHistory()
        self.expected = {c.case_id: _expected(c, history) for c in cases}
        self.kind_of = {c.case_id: c.kind for c in cases}
        self.left = dict(self.expected)  # not finished yet
        self.took: dict[str, list[tuple[float, float]]] = {}  # kind -> (expected, actual) of finished
        self.current: str | None = None
        self.current_started = 0.0

    def start(self, case: Case) -> None:
        self.current, self.current_started = case.case_id, time.monotonic()

    def finish(self, case: Case, seconds: float) -> None:
        expected = self.left.pop(case.case_id, self.expected.get(case.case_id, 0.0))
        self.took.setdefault(case.kind, []).append((expected, seconds))
        if self.current == case.case_id:
            self.current = None

    def remaining(self, now: float | None = None) -> float:
        """Seconds left: the cases not started at their scaled expectation, the current one's rest."""
        now = time.monotonic() if now is None else now
        total = 0.0
        for case_id, expected in self.left.items():
            seconds = expected * self._scale(self.kind_of[case_id])
            if case_id == self.current:  # counts down while it runs; never below nothing
                seconds = max(0.0, seconds - (now - self.current_started))
            total += seconds
        return total

    def _scale(self, kind: str) -> float:
        """This session's time over the expected time: of this kind's finished cases, else of all."""
        pairs = self.took.get(kind) or [p for ps in self.took.values() for p in ps]
        expected = sum(e for e, _ in pairs)
        return sum(a for _, a in pairs) / expected if pairs and expected > 0 else 1.0


def _expected(case: Case, history: CaseHistory) -> float:
    if case.case_id in history.by_case:
        return history.by_case[case.case_id]
    if case.kind in TRAINING_KINDS:  # their time follows their steps and depth, which the prior scales by
        return prior_seconds(case)
    for key in ((case.kind, case.norm, case.impl), (case.kind,)):
        if key in history.by_kind:
            return history.by_kind[key]
    return prior_seconds(case)
