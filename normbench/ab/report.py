"""How `normbench ab` prints its result: the verdict first (with the A/A spreads that set each case's threshold),
then the cases that are not unchanged, then every case on request; markdown for $GITHUB_STEP_SUMMARY;
JSON with counts and per-case ratios (numbers, null for what was not measured)."""

from __future__ import annotations

import math
from collections import Counter

from normbench.ab.gate import SAME_CODE, ABResult, exit_code
from normbench.core.jsondata import json_text

ORDER = {"+": 0, "?": 1, "x": 2, "-": 3, "=": 4}


def verdict_line(result: ABResult) -> str:
    code = exit_code(result)
    n = len(result.cases)
    count = Counter(c.mark for c in result.cases)
    det = {1: "; a deterministic metric regressed", 3: "; a deterministic metric could not be compared"}.get(
        result.deterministic_exit, ""
    )
    if not timed_count(result) and result.cases and all(c.note == SAME_CODE for c in result.cases):
        # nothing was timed: say so, never an A/A spread that was not measured
        return f"{_verdict_word(code)}: no norm code changed: nothing timed; {deterministic_words(result)}"
    noise = (
        f"A/A spread ×{result.aa_spread:.3f} median, ×{result.max_spread:.3f} widest; a case is + beyond "
        f"--factor {result.factor:g} × its spread"
        if result.aa_spread == result.aa_spread
        else "no case timed"
    )
    if code == 1:
        slow = [c.case for c in result.cases if c.mark == "+"]
        head = (
            f"REGRESSION: {count['+']} of {n} cases slower than ×{result.factor:g}" if slow else "REGRESSION"
        )
        return f"{head} ({noise}){det}" + (
            f": {', '.join(slow[:3])}" + (f" and {len(slow) - 3} more (below)" if len(slow) > 3 else "")
            if slow
            else ""
        )
    if code == 3:
        why = f"{count['?']} inconclusive, {count['x']} not compared" if result.cases else "no case timed"
        return f"INCONCLUSIVE: {why} of {n} ({noise}){det}"
    same = sum(1 for c in result.cases if c.note == SAME_CODE)
    apart = f"; {same} more not timed: their norm code did not change" if same else ""
    return f"PASS: {n - same} timed cases within ×{result.factor:g} of {result.base}{apart} ({noise})"


def _verdict_word(code: int) -> str:
    return {0: "PASS", 1: "REGRESSION", 3: "INCONCLUSIVE"}.get(code, "FAIL")


def timed_count(result: ABResult) -> int:
    """The cases whose two sides were timed (those with an A/A spread)."""
    return sum(1 for c in result.cases if c.spread == c.spread)


def deterministic_words(result: ABResult) -> str:
    """What the deterministic benches said, in words."""
    if not result.deterministic:
        return "no deterministic bench compared"
    n = len(result.deterministic)
    same = all(r.get("mark") == "=" for r in result.deterministic)
    return {
        0: f"deterministic benches {'equal' if same else 'within --factor'} ({n} values compared)",
        1: "a deterministic metric regressed",
        3: "a deterministic metric could not be compared",
    }.get(result.deterministic_exit, f"deterministic benches: exit {result.deterministic_exit}")


def rows(result: ABResult, *, everything: bool = False) -> list[dict]:
    from normbench.core.tables import versus_words  # pandas: not at start-up

    cases = sorted(result.cases, key=lambda c: (ORDER[c.mark], -abs(_log(c.ratio))))
    return [
        {
            "mark": c.mark,
            "case": f"{c.kind} {c.case}",
            "head vs base": versus_words(c.ratio, c.lo, c.hi, bounds="range") if c.ratio == c.ratio else "—",
            "A/A": f"×{c.aa:.3f}" if c.aa == c.aa else "—",
            "spread": f"×{c.spread:.3f}" if c.spread == c.spread else "—",
            "note": c.note,
        }
        for c in cases
        if (everything or c.mark != "=") and c.note != SAME_CODE  # those not timed: a line of their own
    ]


def render_text(result: ABResult, fmt: str, *, everything: bool = False) -> str:
    from tabulate import tabulate

    lines = [verdict_line(result), _header(result)]
    table = rows(result, everything=everything)
    if table:
        style = "github" if fmt in ("github", "md") else "plain"
        lines += ["", tabulate(table, headers="keys", tablefmt=style)]
    same = [c for c in result.cases if c.note == SAME_CODE]
    if same:
        lines += ["", f"Not timed, the same norm code at base and head: {len(same)} cases"]
        if everything:
            lines += [f"  = {c.kind} {c.case}" for c in same]
    failed = [r for r in result.deterministic if r.get("mark") in ("+", "!", "x")]
    if failed:
        lines += ["", "Deterministic benches (compared by value, base run vs head run):"]
        lines += [
            f"  {r['mark']} {r['bench']} {r['case']} {r['metric']}: {r.get('note') or ''}" for r in failed
        ]
    lines.append(
        "Ranges: the smallest and largest of the processes' ratios (head time over base time; "
        f"statistic {result.stat})."
    )
    return "\n".join(lines) + "\n"


def render_json(result: ABResult) -> str:
    data = result.to_json()
    data.update(
        verdict=verdict_line(result),
        exit_code=exit_code(result),
        counts=dict(Counter(c.mark for c in result.cases)),
    )
    return json_text(data, indent=1) + "\n"


def _header(result: ABResult) -> str:
    return (
        f"base {result.base} ({result.base_commit[:12]}) vs head {result.head}: {len(result.cases)} cases, "
        f"{result.processes} processes ({result.mode}), {result.wall_s:.0f} s"
    )


def _log(x: float) -> float:
    return math.log(x) if x == x and x > 0 else 0.0
