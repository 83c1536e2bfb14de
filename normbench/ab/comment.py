"""`normbench ab --format md`: the result as a pull-request comment. The verdict in an alert callout, a count
table, then the slower and the inconclusive cases with short names (the parameters that differ from the
bench's defaults; those all rows share go in a caption), base and head times, the ratio and its range; the
rest, the legend of the marks, the A/A figures and the commits folded away. Layout: docs/ci.md."""

from __future__ import annotations

from collections import Counter

from normbench.ab.gate import SAME_CODE, ABCase, ABResult, exit_code
from normbench.ab.report import deterministic_words, timed_count, verdict_line
from normbench.core.comment import callout, details, fit, table
from normbench.core.verdicts import AB_MARKS

MARKER = "<!-- normbench-ab -->"  # the sticky comment's tag: a workflow finds and updates its own comment
TITLE = {0: "pass", 1: "regression", 3: "inconclusive"}
LEGEND = (
    "| mark | means | exit |\n|:--|:--|--:|\n"
    "| `+` | slower: ratio ÷ S above --factor | 1 |\n"
    "| `?` | inconclusive: ratio ×/÷ S straddles --factor | 3 |\n"
    "| `x` | not compared: the case failed on a side | 3 |\n"
    "| `-` | faster: ratio × S below 1 / --factor | 0 |\n"
    "| `=` | within --factor: the whole range inside it | 0 |"
)


def render_comment(result: ABResult) -> str:
    code = exit_code(result)
    count = Counter(c.mark for c in result.cases)
    same = sum(1 for c in result.cases if c.note == SAME_CODE)
    parts = [
        f"{MARKER}\n### normbench ab: {TITLE.get(code, 'failed')}",
        callout(code, _headline(result, code)),
        _counts(result, count, same),
    ]
    for mark, heading in (("+", "Slower"), ("?", "Inconclusive"), ("x", "Not compared")):
        rows = [c for c in result.cases if c.mark == mark]
        if rows:
            parts.append(_cases(f"{heading} ({len(rows)})", rows))
    if any(c.mark in "+?x" for c in result.cases):
        parts.append(
            f"*ratio*: head time ÷ base time, the median over {result.processes} processes (twice as many after "
            "a second look); *range*: ratio ×/÷ the case's A/A spread S, where a rerun would fall (about 95%); "
            "*base*, *head*: each side's fastest sample, the median over the processes."
        )
    failed = [r for r in result.deterministic if r.get("mark") in ("+", "!", "x")]
    if failed:
        body = [[r["mark"], f"{r['bench']} {r['case']}", r["metric"], r.get("note") or ""] for r in failed]
        parts.append(
            "**Deterministic benches** (by value, base run vs head run)\n\n"
            + table(["", "case", "metric", "why"], body)
        )
    rest = [c for c in result.cases if c.mark in "-=" and c.note != SAME_CODE]
    if rest:
        parts.append(details(f"{len(rest)} timed cases faster or within ×{result.factor:g}", _rows(rest)))
    parts += [details("What the marks mean", LEGEND), details("A/A noise and commits", _noise(result))]
    return fit(parts)


def _headline(result: ABResult, code: int) -> str:
    if not timed_count(result) and all(c.note == SAME_CODE for c in result.cases):
        return f"**No norm code changed**: nothing timed; {deterministic_words(result)}."
    slower = sorted({c.name or c.case for c in result.cases if c.mark == "+"})
    if code == 1 and slower:
        n = sum(c.mark == "+" for c in result.cases)
        names = ", ".join(f"`{s}`" for s in slower[:5]) + (" …" if len(slower) > 5 else "")
        return f"**Slower** than ×{result.factor:g} beyond this job's noise: {n} cases of {names}."
    if code == 1:
        return f"**Regression**: {deterministic_words(result)}."
    if code == 3:
        return "**Inconclusive**: " + verdict_line(result).split(": ", 1)[1].split(" (")[0] + "; not a pass."
    return f"**Pass**: every timed case within ×{result.factor:g} of `{result.base}`."


def _counts(result: ABResult, count: Counter, same: int) -> str:
    rows = [[f"`{m}` {AB_MARKS[m]}", count[m]] for m in "+?x-" if count[m] or m in "+?"]
    rows.append([f"`=` within ×{result.factor:g}", count["="] - same])
    if same:  # set apart: cases whose norm code did not change were not timed at all
        rows.append(["`=` not timed: the same norm code at base and head", same])
    return table(["cases", "n"], rows, right={1})


def _cases(heading: str, rows: list[ABCase]) -> str:
    consts = _constants(rows)
    caption = f"{heading}" + (
        f"; every row: {' '.join(f'{k}={v}' for k, v in consts.items())}" if consts else ""
    )
    return f"**{caption}**\n\n{_rows(rows, consts)}"


def _rows(rows: list[ABCase], consts: dict | None = None) -> str:
    from normbench.core.tables import format_seconds

    rows = sorted(rows, key=lambda c: -abs(c.ratio - 1) if c.ratio == c.ratio else 0)
    body = [
        [
            c.mark,
            _short(c, consts or {}),
            format_seconds(c.base_s),
            format_seconds(c.head_s),
            f"×{c.ratio:.3f}" if c.ratio == c.ratio else "—",
            f"×{c.ratio / c.spread:.3f}–{c.ratio * c.spread:.3f}" if c.spread == c.spread else c.note,
        ]
        for c in rows
    ]
    return table(["", "case", "base", "head", "ratio", "range"], body, right={2, 3, 4})


def _short(c: ABCase, consts: dict) -> str:
    params = " ".join(f"{k}={v}" for k, v in c.params.items() if consts.get(k, object()) != v)
    return f"{c.kind} {c.name or c.case}" + (f" {params}" if params else "")


def _constants(rows: list[ABCase]) -> dict:
    """The parameters every row shares, with one value (a caption says them once); none for one row."""
    if len(rows) < 2:
        return {}
    first = rows[0].params
    return {k: v for k, v in first.items() if all(k in r.params and r.params[k] == v for r in rows[1:])}


def _noise(result: ABResult) -> str:
    spread = (
        f"×{result.aa_spread:.3f} median, ×{result.max_spread:.3f} widest"
        if result.aa_spread == result.aa_spread
        else "not measured (no case timed)"
    )
    look = (
        f"{result.second_look} cases left `?` by {result.processes} processes timed in {result.processes} more"
        if result.second_look
        else "none needed"
    )
    return "\n".join(
        [
            f"- base `{result.base}` = `{result.base_commit}`; head `{result.head}`",
            f"- {result.processes} fresh processes ({result.mode}), statistic `{result.stat}`; second look: {look}",
            f"- A/A spread S (head against a second build of itself, per case): {spread}",
            f"- a case is `+` when ratio ÷ S exceeds --factor {result.factor:g}; wall time {result.wall_s:.0f} s",
        ]
    )
