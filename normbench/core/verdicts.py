"""What the two gates, `compare` and `ab`, answer with: --factor's default, the exit codes and the marks.
`+ - = x` mean the same in both and are one table; `~` (compare: beyond --factor, not significant) and `?`
(ab: the case's interval straddles --factor) are each one gate's own. docs/ci.md, "Marks"."""

from __future__ import annotations

DEFAULT_FACTOR = 1.1  # the change that counts, in both gates
PASS, REGRESSION, INCONCLUSIVE = 0, 1, 3  # 2: bad input, the CLI's error policy (cli/_common.py)

SHARED_MARKS = {"+": "worse", "-": "better", "=": "unchanged", "x": "not comparable"}
COMPARE_MARKS = {
    **{m: SHARED_MARKS[m] for m in "+-"},
    "~": "changed, not significant",  # a ratio beyond --factor the test cannot call
    "=": SHARED_MARKS["="],
    "!": "status regressed",
    "x": SHARED_MARKS["x"],
}
AB_MARKS = {**SHARED_MARKS, "?": "inconclusive"}  # an interval that straddles --factor: exit 3, never a pass
