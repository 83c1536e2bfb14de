"""`normbench compare --format md`: the comparison as a pull-request comment or job summary. The verdict in
an alert callout, the counts, the regressions and the cases not compared; the other changed rows, the legend
of the marks and the noise notes folded away; unchanged rows left out. Layout: docs/ci.md."""

from __future__ import annotations

from normbench.analysis.compare.verdict import counts
from normbench.analysis.rows import CompareRow
from normbench.core.comment import callout, details, fit, table
from normbench.core.tables import format_seconds
from normbench.core.verdicts import COMPARE_MARKS as MARKS

MARKER = "<!-- normbench-compare -->"
TITLE = {0: "pass", 1: "regression", 3: "inconclusive"}


def render_compare_comment(
    rows: list[CompareRow], verdict: str, code: int, title: str, notes: list[str]
) -> str:
    n = counts(rows)
    parts = [
        f"{MARKER}\n### normbench compare: {TITLE.get(code, 'failed')}",
        callout(code, f"**{verdict.split(' (exit')[0]}**"),
        table(["mark", "rows"], [[f"`{m}` {MARKS[m]}", n[m]] for m in n], right={1}),
    ]
    for heading, picked in (
        ("Regressions", [r for r in rows if r.regression]),
        ("Not compared", [r for r in rows if r.mark == "x"]),
    ):
        if picked:
            parts.append(f"**{heading} ({len(picked)})**\n\n{_rows(picked)}")
    other = [r for r in rows if r.mark in ("-", "~")]
    if other:
        parts.append(details(f"{len(other)} rows better, or changed but not significant", _rows(other)))
    legend = "\n".join(f"- `{m}` {MARKS[m]}" for m in MARKS)
    parts.append(details("What the marks mean", legend))
    parts.append(details("Runs and noise", "\n".join(f"- {line}" for line in [title, *notes])))
    return fit(parts)


def _rows(rows: list[CompareRow]) -> str:
    def value(v, unit):
        if v is None or v != v:
            return "—"
        return format_seconds(v) if unit == "s" else f"{v:.4g}"

    body = [
        [
            r.mark,
            f"{r.bench} {r.case}",
            r.metric,
            value(r.base, r.unit),
            value(r.new, r.unit),
            "—" if r.ratio is None else f"×{r.ratio:.3f}",
            r.note,
        ]
        for r in rows
    ]
    return table(["", "case", "metric", "base", "new", "new/base", "why"], body, right={3, 4, 5})
