"""Claims: named, checkable statements from the papers, one function each, evaluated on stored rows.

Details: docs/claims.md, "How a verdict is reached"."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

from collections.abc import Callable
from dataclasses import dataclass

from normbench.core.registry import Registry

PASS, FAIL, NOT_REPRODUCED, NO_DATA = "PASS", "FAIL", "NOT REPRODUCED", "NO DATA"
COLUMNS = ["claim", "verdict", "numbers", "seeds", "CI", "threshold", "source"]


@dataclass
class Verdict:
    verdict: str
    numbers: str
    seeds: str = "—"  # which seeds were pooled, e.g. "5 (0–4)"; "—" for deterministic checks
    ci: str = "—"  # the 95% interval of the quantity the threshold is applied to
    # the values of the claim's Disagreement.quantity (one per depth, ...); () when the check has none
    measured: tuple[float, ...] = ()


@dataclass(frozen=True)
class Disagreement:
    """A measured, documented way the claim fails here. `quantity` is what the check reports in
    Verdict.measured; [low, high] is the range it was measured in (its direction and size, with the seed
    spread); `falsifier` says what outcome would show the explanation wrong."""

    text: str  # what was measured, where, and why it differs from the paper
    quantity: str
    low: float
    high: float
    falsifier: str

    def covers(self, measured: tuple[float, ...]) -> bool:
        return bool(measured) and all(self.low <= v <= self.high for v in measured)

    def summary(self) -> str:
        return f"{self.quantity} in [{self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class Claim:
    name: str
    source: str
    statement: str
    threshold: str
    check: Callable[[pd.DataFrame], Verdict]
    disagreement: Disagreement | None = None


CLAIMS: Registry[Claim] = Registry("claim", "normbench.analysis.claims")
REPORTED = "REPORTED"  # a measured finding with no threshold: no paper states a number to check it against


def claim(
    name: str, *, source: str, statement: str, threshold: str, disagreement: Disagreement | None = None
):
    def add(fn):
        CLAIMS.add(name, Claim(name, source, statement, threshold, fn, disagreement))
        return fn

    return add


def all_claims() -> dict[str, Claim]:
    return CLAIMS.all()


def judge(c: Claim, frame: pd.DataFrame) -> Verdict:
    try:
        v = c.check(frame)
    except Exception as exc:  # a claim that cannot read the rows says why instead of hiding the report
        return Verdict(NO_DATA, f"could not evaluate: {type(exc).__name__}: {exc}")
    known = c.disagreement
    if v.verdict != FAIL or known is None:
        return v
    if known.covers(v.measured):
        return Verdict(NOT_REPRODUCED, f"{v.numbers}. Known: {known.text}", v.seeds, v.ci, v.measured)
    got = ", ".join(f"{x:.3g}" for x in v.measured) or "not reported"
    return Verdict(
        FAIL,
        f"{v.numbers}. Outside the documented disagreement ({known.summary()}; measured {got})",
        v.seeds,
        v.ci,
        v.measured,
    )


def evaluate(names: list[str], frame: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    claims = all_claims()
    rows = []
    for name in names:
        c = claims[name]
        v = judge(c, frame)
        rows.append(
            {
                "claim": name,
                "verdict": v.verdict,
                "numbers": v.numbers,
                "seeds": v.seeds,
                "CI": v.ci,
                "threshold": c.threshold,
                "source": f"{c.source} — claim: {c.statement}",
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def ok_rows(frame: pd.DataFrame, bench: str, metric: str) -> pd.DataFrame:
    """Rows of one metric of one bench kind from cases that ran to completion (not failed/skipped)."""
    sel = frame[(frame["bench"] == bench) & (frame["metric"] == metric)]
    return sel[~sel["status"].isin(["failed", "skipped", "unavailable"])]
