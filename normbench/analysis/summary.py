"""The report's opening summary: at most MAX_LINES lines that answer the suite's questions, so a reader who
stops there knows the answer and what to distrust. One line on the run(s); the warnings; each bench kind's
headline (Bench.headline: a plugin bench adds its own); the trade-off across kinds; the claims' verdict
counts and every claim not PASS by name; the cases not ok, grouped by status and reason.

It is data first (SummaryLine: section and text, what `report --format json` stores under "summary") and
text second (summary_text: one line each, wrapped at the terminal width, never cut)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from normbench.analysis.records import bench_order
from normbench.analysis.report import (
    claims_table,
    kind_rows,
    one_copy_per_case,
    report_options,
    report_warnings,
)
from normbench.analysis.tradeoff import tradeoff_records
from normbench.benches import all_benches
from normbench.core.tables import ReportOptions, Table
from normbench.results.env import machines_of

MAX_LINES = 30  # the latency section alone holds up to 15 (one line per shape, up to 12)
SECTION_WIDTH = 10


@dataclass(frozen=True)
class SummaryLine:
    section: str  # run, warning, a bench kind, trade-off, claims, not ok
    text: str


def build_summary(
    frame: pd.DataFrame,
    manifests: list[dict],
    *,
    baseline: str | None = None,
    opts: ReportOptions | None = None,
) -> list[SummaryLine]:
    """`opts`: the report's options when its tables share them (what both read is derived once)."""
    opts = opts or report_options(manifests, baseline)
    sections: list[list[SummaryLine]] = [[SummaryLine("run", _run_line(frame, manifests))]]
    warnings = opts.once("warnings", lambda: report_warnings(frame, manifests))
    sections.append([SummaryLine("warning", w) for w in warnings])
    frame = opts.once("one copy per case", lambda: one_copy_per_case(frame))
    benches = all_benches()
    for kind in sorted(dict.fromkeys(frame["bench"].unique()), key=bench_order):
        if kind in benches:
            lines = benches[kind].headline(kind_rows(frame, benches[kind], opts), opts)
            sections.append([SummaryLine(kind, text) for text in lines])
    tradeoff = opts.once("tradeoff", lambda: tradeoff_records(frame))
    sections.append([SummaryLine("trade-off", t) for t in _tradeoff_lines(tradeoff)])
    claims = opts.once("claims", lambda: claims_table(frame, manifests))
    sections.append([SummaryLine("claims", t) for t in _claims_lines(claims)])
    sections.append([SummaryLine("not ok", t) for t in _not_ok_lines(frame)])
    return _within_budget([s for s in sections if s], MAX_LINES)


def _run_line(frame: pd.DataFrame, manifests: list[dict]) -> str:
    runs = ", ".join(f"{m['run_id']} ({m.get('suite')})" for m in manifests)
    statuses = frame.drop_duplicates(["run_id", "case_id"])["status"].value_counts()
    counts = ", ".join(f"{n} {s}" for s, n in statuses.items())
    machine = machines_of(manifests)
    return f"{runs}: {statuses.sum()} cases, {counts}" + (f"; {machine}" if machine else "")


def _tradeoff_lines(rec: pd.DataFrame) -> list[str]:
    """The norms trade-off table's headline (from its records): the lowest final loss per objective, and
    each norm's block cost over the Linear (folded where the norm folds)."""
    if rec.empty:
        return []
    config = [c for c in rec.columns if c in ("norm", "placement", "objective", "init", "depth")]
    lines = []
    groups = (
        rec.groupby("objective") if "objective" in rec and rec["objective"].nunique() > 1 else [("", rec)]
    )
    for objective, g in groups:
        g = g[g["ok"] > 0].dropna(subset=["final_loss_mean"])
        if g.empty:
            continue
        best = g.loc[g["final_loss_mean"].idxmin()]
        name = " ".join(str(best[c]) for c in config if c != "objective")
        lines.append(
            f"lowest final loss{f' ({objective})' if objective else ''}: {name} {best['final_loss_mean']:.3f} nats"
        )
    cost = rec.drop_duplicates("norm").set_index("norm")
    cells = [
        f"{n} {cost.at[n, 'block_over_linear']:+.0%}"
        for n in cost.index
        if pd.notna(cost.at[n, "block_over_linear"])
    ]
    folded = [
        f"{n} {cost.at[n, 'folded_over_linear']:+.0%}"
        for n in cost.index
        if pd.notna(cost.at[n, "folded_over_linear"])
    ]
    if cells:
        lines.append(
            "block cost over the Linear: "
            + ", ".join(cells)
            + (f"; folded: {', '.join(folded)}" if folded else "")
        )
    return lines


def _claims_lines(claims: Table | None) -> list[str]:
    if claims is None:
        return []
    verdicts = claims.frame
    counts = verdicts["verdict"].value_counts()
    lines = [f"{len(verdicts)} claims: " + ", ".join(f"{n} {v}" for v, n in counts.items())]
    for _, row in verdicts[verdicts["verdict"] != "PASS"].iterrows():
        lines.append(f"{row['verdict']} {row['claim']}: {' '.join(str(row['numbers']).split())}")
    return lines


def _not_ok_lines(frame: pd.DataFrame) -> list[str]:
    """Cases not ok, one line per (status, kind of reason): the implementations and how many cases. Reasons
    that differ only in their numbers (each stuck run's own loss) are one kind, shown by its first case."""
    cases = frame[frame["status"] != "ok"].drop_duplicates("case_id")
    if cases.empty:
        return []
    why = cases["error"].fillna("").map(lambda e: " ".join(str(e).split()))
    cases = cases.assign(
        label=cases["norm"].fillna("") + ":" + cases["impl"].fillna(""),
        why=why,
        kind=why.map(lambda w: _NUMBER.sub("#", w)),
    )
    lines = []
    for (status, _), g in cases.groupby(["status", "kind"], sort=True):
        names = g["label"].value_counts()
        who = ", ".join(f"{n} ×{k}" if k > 1 else n for n, k in names.items())
        first = g["why"].iloc[0]
        example = f"e.g. {first}" if g["why"].nunique() > 1 else first
        lines.append(f"{len(g)} {status}: {who}" + (f" ({example})" if first else ""))
    return lines


_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _within_budget(sections: list[list[SummaryLine]], budget: int) -> list[SummaryLine]:
    """Cut the longest sections first until the lines fit; a cut section ends with where the rest is."""
    sizes = [len(s) for s in sections]
    while sum(sizes) > budget:
        i = max(range(len(sizes)), key=lambda k: sizes[k])
        if sizes[i] <= 2:
            break
        sizes[i] -= 1
    out = []
    for section, size in zip(sections, sizes, strict=True):
        if size < len(section):
            left_out = len(section) - size + 1
            kept = section[: size - 1]
            more = f"… {left_out} more lines: `normbench report --full`"
            section = [*kept, SummaryLine(section[0].section, more)]
        out.extend(section)
    return out


def summary_text(lines: list[SummaryLine], width: int) -> list[str]:
    """One line per SummaryLine: the section name (once per section) in a column, the text wrapped at
    `width` under its column (a worst value or the last name of a list is never cut off). A line of
    aligned columns (a latency shape) too long for the width keeps its columns on one line and its last
    column, whole, on the next."""
    import textwrap

    from normbench.analysis.fit import wrap

    indent = " " * (SECTION_WIDTH + 1)
    out, previous = [], None
    for line in lines:
        name = line.section if line.section != previous else ""
        previous = line.section
        text = f"{name:<{SECTION_WIDTH}} {line.text}".rstrip()
        columns, gap, last = text.rpartition("  ")
        if len(text) > width and "  " in line.text.strip() and len(columns) <= width:
            deeper = indent + "  "
            out.append(columns.rstrip())
            out.extend(textwrap.wrap(last, width, initial_indent=deeper, subsequent_indent=deeper))
        else:
            out.extend(wrap(text, width, indent=indent))
    return out


def summary_records(lines: list[SummaryLine]) -> list[dict]:
    return [{"section": line.section, "text": line.text} for line in lines]
