"""Claims: named, checkable statements from the papers, one function each, evaluated on stored rows.

    @claim("rmsnorm_exact_bound", source="Xiong et al. 2020, Lemma 3; science.md §6.2",
           statement="RMSNorm's Jacobian norm equals sqrt(d)/||x|| ...")
    def rmsnorm_exact_bound(frame) -> Verdict: ...

A suite lists the claims it supports in `claims = [...]`; `normbench report` prints their verdicts with
the numbers each one looked at. A claim without the rows it needs says NO DATA; a claim that fails says
FAIL with its numbers — thresholds are the papers', never loosened to pass."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

PASS, FAIL, NO_DATA = "PASS", "FAIL", "NO DATA"


@dataclass
class Verdict:
    verdict: str
    numbers: str


@dataclass(frozen=True)
class Claim:
    name: str
    source: str
    statement: str
    check: Callable[[pd.DataFrame], Verdict]


_CLAIMS: dict[str, Claim] = {}


def claim(name: str, *, source: str, statement: str):
    def add(fn):
        _CLAIMS[name] = Claim(name, source, statement, fn)
        return fn

    return add


def all_claims() -> dict[str, Claim]:
    from normbench.plugins import import_package_modules

    import_package_modules("normbench.analysis.claims")
    return dict(_CLAIMS)


def evaluate(names: list[str], frame: pd.DataFrame) -> pd.DataFrame:
    claims = all_claims()
    rows = []
    for name in names:
        c = claims[name]
        try:
            v = c.check(frame)
        except Exception as exc:  # a claim that cannot read the rows says why instead of hiding the report
            v = Verdict(NO_DATA, f"could not evaluate: {type(exc).__name__}: {exc}")
        rows.append(
            {
                "claim": name,
                "verdict": v.verdict,
                "numbers": v.numbers,
                "statement": c.statement,
                "source": c.source,
            }
        )
    return pd.DataFrame(rows, columns=["claim", "verdict", "numbers", "statement", "source"])


def ok_rows(frame: pd.DataFrame, bench: str, metric: str) -> pd.DataFrame:
    """Rows of one metric of one bench kind from cases that ran to completion (not failed/skipped)."""
    sel = frame[(frame["bench"] == bench) & (frame["metric"] == metric)]
    return sel[~sel["status"].isin(["failed", "skipped", "unavailable"])]
