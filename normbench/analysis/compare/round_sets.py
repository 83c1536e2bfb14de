"""Paired ratios in `compare`, judged against their round set: the median change of a round set of at least
MIN_MEMBERS members is its common shift (its reference's own level moved), and each member is judged by its
change beyond it. The measurements behind it and what no ratio can see: docs/methodology.md, "Comparing
runs"."""

from __future__ import annotations

import math
from statistics import median

from normbench.analysis.rows import CompareRow

MIN_MEMBERS = 4


def judge_against_round_sets(members: list[tuple[CompareRow, str | None, str | None]]) -> list[float]:
    """Set each row's `shift` to the median ratio of its round set (the same set in both runs, with at
    least MIN_MEMBERS members); returns the shifts found, one per set. The member the ratios are taken
    against (the reference for time_vs_ref, the copy probe for time_vs_copy) is in every set and has no row
    of its own: its ratio to itself is 1 in both runs, so it counts as a member whose change is 1."""
    sets: dict[tuple[str, str], list[CompareRow]] = {}
    for row, base_set, new_set in members:
        row.round_set = base_set if base_set == new_set or new_set else None
        if base_set and new_set and row.ratio is not None and 0 < row.ratio < math.inf:
            sets.setdefault((base_set, new_set), []).append(row)
    shifts = []
    for rows in sets.values():
        if len(rows) + 1 < MIN_MEMBERS:
            continue
        shift = math.exp(median([0.0, *(math.log(r.ratio) for r in rows)]))  # 0.0: the one compared against
        shifts.append(shift)
        for r in rows:
            r.shift = shift
    return shifts


def shift_note(kind: str, metric: str, shifts: list[float]) -> str:
    """One line: how far the round sets moved as a whole (what each member was judged beyond)."""
    if not shifts:
        return ""
    return (
        f"{kind}/{metric}: {len(shifts)} round set(s) moved as a whole by ×{min(shifts):.3f}–×{max(shifts):.3f} "
        "(their reference's own level); each case is judged by its change beyond its set's"
    )


def confirm_across_references(rows: list[CompareRow], paired: tuple[str, ...], factor: float) -> None:
    """A case changed only if two references say so. A case timed against both (time_vs_ref and
    time_vs_copy): a real change of its own moves its ratio to either by the same factor, while a change in
    how one reference and the case share the machine (a copy is memory-bound, a norm partly compute-bound)
    moves one ratio alone. The reference itself and the copy probe have one ratio (to each other); their
    second witness is the rest of their round set: when the reference slows, every other member's
    time_vs_ref drops together (the set's shift). A + or - that the second witness does not repeat (beyond
    --factor, the same way) becomes ~ with the reason; without a second witness the one metric decides."""
    if len(paired) < 2:
        return
    shifts = {(r.metric, r.round_set): r.shift for r in rows if r.shift and r.round_set}
    by_case: dict[frozenset, list[CompareRow]] = {}
    for row in rows:
        if row.metric in paired and row.case_ids:
            by_case.setdefault(row.case_ids, []).append(row)
    for members in by_case.values():
        for row in members:
            if row.mark not in ("+", "-"):
                continue
            witnesses = [(o.metric, o.judged_ratio, o.mark) for o in members if o is not row]
            if not witnesses:  # the reference or the probe: the other metric's shift of its round set
                witnesses = [
                    (f"its round set's {m}", 1 / shifts[(m, row.round_set)], None)
                    for m in paired
                    if m != row.metric and (m, row.round_set) in shifts
                ]
            agree = all(_same_way(row.mark, ratio, mark, factor) for _, ratio, mark in witnesses)
            if witnesses and not agree:
                said = ", ".join(f"{name} ×{ratio:.3f}" for name, ratio, _ in witnesses)
                row.note = f"{row.note}; not confirmed by the other reference ({said})".lstrip("; ")
                row.mark = "~"


def _same_way(mark: str, ratio: float | None, other_mark: str | None, factor: float) -> bool:
    if other_mark is not None:
        return other_mark == mark
    if ratio is None:
        return False
    return ratio > factor if mark == "+" else ratio < 1 / factor
