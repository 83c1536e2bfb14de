"""What is left of a run, in seconds (docs/methodology.md, "The run's ETA"). A case's expected time: its
own in the stored runs, else its implementation's or kind's mean there (not for latency: a mean splits no
round set fairly; results/history.py), else a prior per bench kind (PRIOR_S: an idle 2-core VM; a training
kind's scaled by steps and depth). Latency cases at the same parameters are timed in one round set: its
first case takes the set's time, the others none, so the set is expected at its first case. As the session
goes on, each kind's expectations are scaled by how its finished cases compare (smoothed by SMOOTHING_S
seconds at the expected pace), the kinds not seen yet by the session's overall pace."""

from __future__ import annotations

import time

from normbench.core.case import Case
from normbench.norms import all_norms
from normbench.results.history import CaseHistory

# Wall seconds per case (per member of a latency round set) on an idle 2-core VM, quick suite, 1 thread
PRIOR_S = {"latency": 0.17, "block": 0.3, "jacobian": 0.08, "init": 0.5, "stability": 1.3}
PRIOR_OTHER_S = 0.5
TRAINING_KINDS = ("stability",)  # their prior is for 40 steps of a 4-layer model
SMOOTHING_S = 2.0  # how many seconds at the expected pace this session's first cases are weighed against
MAX_SET = 21  # a round set's members beside its reference and the copy probe (benches/_latency/round_set.py)


def prior_seconds(case: Case) -> float:
    seconds = PRIOR_S.get(case.kind, PRIOR_OTHER_S)
    if case.kind in TRAINING_KINDS:
        steps = case.params.get("steps") or 40
        depth = case.params.get("depth") or 4
        seconds *= (steps / 40) * (depth / 4)
    return seconds


def round_sets(cases: list[Case]) -> list[list[Case]]:
    """The cases grouped as the latency bench times them: a case and the later cases of the same kind and
    parameters (pairing = "shape", no time limit) in one set of at most MAX_SET; every other case alone."""
    sets: list[list[Case]] = []
    open_sets: dict[tuple, list[Case]] = {}
    for case in cases:
        key = _set_key(case)
        members = open_sets.get(key) if key is not None else None
        if members is not None and len(members) < MAX_SET:
            members.append(case)
            continue
        sets.append([case])
        if key is not None:
            open_sets[key] = sets[-1]
    return sets


def _set_key(case: Case) -> tuple | None:
    if case.kind != "latency" or case.timeout_s is not None or case.params.get("pairing", "shape") != "shape":
        return None
    return (case.kind, repr(sorted(case.params.items(), key=lambda kv: kv[0])))


class Estimate:
    """The expected seconds of each case still to run, and of the whole rest of the session."""

    def __init__(self, cases: list[Case], history: CaseHistory | None = None):
        history = history or CaseHistory()
        self.expected: dict[str, float] = {}
        for members in round_sets(cases):  # the set's first case is expected to take the set's time
            own = [_expected(c, history) for c in members]
            self.expected |= {c.case_id: 0.0 for c in members[1:]}
            self.expected[members[0].case_id] = sum(own)
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
        """This session's time over the expected time, of this kind's finished cases (else of all), each
        side with SMOOTHING_S seconds at the expected pace: one case that ran long (a round set formed
        otherwise than expected, a first call's warm-up) moves the estimate, never multiplies it."""
        pairs = self.took.get(kind) or [p for ps in self.took.values() for p in ps]
        expected = sum(e for e, _ in pairs)
        actual = sum(a for _, a in pairs)
        return (actual + SMOOTHING_S) / (expected + SMOOTHING_S)


def _expected(case: Case, history: CaseHistory) -> float:
    if case.case_id in history.by_case:
        return history.by_case[case.case_id]
    if _unavailable(case):  # an optional kernel not installed: stored at once
        return 0.0
    if case.kind in TRAINING_KINDS:  # their time follows their steps and depth, which the prior scales by
        return prior_seconds(case)
    if case.kind == "latency":  # a mean over stored cases splits no round set's time fairly (its first
        return prior_seconds(case)  # case took it all; the others of an interrupted set were never stored)
    for key in ((case.kind, case.norm, case.impl), (case.kind,)):
        if key in history.by_kind:
            return history.by_kind[key]
    return prior_seconds(case)


def _unavailable(case: Case) -> bool:
    norm = all_norms().get(case.norm) if case.norm else None
    info = norm.impls.get(case.impl) if norm is not None else None
    try:
        return info is not None and bool(info.missing_requirement())
    except Exception:  # a plugin's check that fails: the case runs (and says why), not our concern here
        return False
