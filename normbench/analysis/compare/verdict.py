"""What `normbench compare` answers: the verdict and its exit code, the counts of each mark, the
regressions and the cases not compared with the reason for each, and the comparison as a table or records.

Exit codes: 0 every case compared and no regression; 1 at least one regression (+ or !), whatever else;
3 inconclusive: some case not comparable (x, among them changes no test can judge at their sample size), or
a timing metric whose run-to-run noise floor is above --factor (a change of that size could hide in it);
2 bad input (the CLI's error policy)."""

from __future__ import annotations

import json

import pandas as pd

from normbench.analysis.compare.frames import Comparison
from normbench.analysis.rows import CompareRow
from normbench.core.tables import format_seconds
from normbench.core.verdicts import COMPARE_MARKS as MARKS
from normbench.core.verdicts import INCONCLUSIVE, PASS, REGRESSION

COUNTED = ("+", "-", "~", "=", "x", "!")


def counts(rows: list[CompareRow]) -> dict[str, int]:
    return {m: sum(r.mark == m for r in rows) for m in COUNTED}


def regressions(rows: list[CompareRow]) -> list[dict]:
    return [_brief(r) for r in rows if r.regression]


def not_compared(rows: list[CompareRow]) -> list[dict]:
    return [_brief(r) for r in rows if r.mark == "x"]


def _brief(r: CompareRow) -> dict:
    return {
        "mark": r.mark,
        "bench": r.bench,
        "case": r.case,
        "metric": r.metric,
        "ratio": r.ratio,  # written by core/jsondata.py: a ratio that is not finite is null
        "reason": r.note,
    }


def exit_code(result: Comparison, *, allow_incomparable: bool = False) -> int:
    if any(r.regression for r in result.rows):
        return REGRESSION
    if not allow_incomparable and (not_compared(result.rows) or result.undetectable):
        return INCONCLUSIVE
    return PASS


def verdict_line(result: Comparison, *, allow_incomparable: bool = False) -> str:
    """The answer first: one line that says pass, regression or inconclusive, and why."""
    c = counts(result.rows)
    n_reg, n_x = c["+"] + c["!"], c["x"]
    code = exit_code(result, allow_incomparable=allow_incomparable)
    if code == REGRESSION:
        head = f"REGRESSION: {n_reg} regression(s)" + (f", {n_x} not comparable" if n_x else "")
    elif code == INCONCLUSIVE:
        why = [f"{n_x} not comparable"] if n_x else []
        why += result.undetectable
        head = "INCONCLUSIVE: " + "; ".join(why)
    else:
        head = "PASS: no regression" + (f" ({n_x} not comparable, allowed)" if n_x else "")
        if result.undetectable and allow_incomparable:
            head += "; " + "; ".join(result.undetectable) + " (allowed)"
    return f"{head} (exit {code}); {summary_line(result.rows)}"


def summary_line(rows: list[CompareRow]) -> str:
    """The counts object as JSON (what the JSON output carries under "counts"), for grep and jq alike."""
    return f"counts {json.dumps(counts(rows))}"


def comparison_table(rows: list[CompareRow], *, only_changed: bool = False) -> pd.DataFrame:
    def fmt(v, unit):
        if v is None or pd.isna(v):
            return ""
        return format_seconds(v) if unit == "s" else f"{v:.4g}"

    shown = [r for r in rows if not only_changed or r.mark != "="]
    return pd.DataFrame(
        {
            "": [r.mark for r in shown],
            "bench": [r.bench for r in shown],
            "case": [r.case for r in shown],
            "metric": [r.metric for r in shown],
            "base": [fmt(r.base, r.unit) for r in shown],
            "new": [fmt(r.new, r.unit) for r in shown],
            "ratio": ["" if r.ratio is None else f"{r.ratio:.3f}" for r in shown],
            "p": ["" if r.p is None else f"{r.p:.2g}" for r in shown],
            "note": [r.note for r in shown],
        },
        columns=["", "bench", "case", "metric", "base", "new", "ratio", "p", "note"],
    )


def comparison_records(rows: list[CompareRow], *, only_changed: bool = False) -> pd.DataFrame:
    """The comparison as data (csv/json): base/new in the metric's unit (seconds for times), ratio = new/base,
    p of the Mann-Whitney test, the mark and its meaning."""
    shown = [r for r in rows if not only_changed or r.mark != "="]
    columns = ["mark", "meaning", "bench", "case", "metric", "unit", "base", "new", "ratio", "p", "note"]
    return pd.DataFrame(
        [
            {
                "mark": r.mark,
                "meaning": MARKS[r.mark],
                "bench": r.bench,
                "case": r.case,
                "metric": r.metric,
                "unit": r.unit,
                "base": r.base,
                "new": r.new,
                "ratio": r.ratio,
                "p": r.p,
                "note": r.note,
            }
            for r in shown
        ],
        columns=columns,
    ).astype({"base": "float64", "new": "float64", "ratio": "float64", "p": "float64"})
