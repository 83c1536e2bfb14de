"""normbench ab's verdicts, an equivalence test: each case's A/A spread S comes from the spread of its
per-process ratios (head/base and head'/head) and the A/A's own offset; + when ratio / S is beyond --factor,
= only when ratio × S is within it, ? when the interval straddles it; a case failed on a side is x, one
unavailable on both sides is =; any + exits 1, any ? or x exits 3."""

from __future__ import annotations

import math

from normbench.ab.gate import ABResult, case_spread, exit_code, judge
from normbench.ab.options import ABOptions
from normbench.core.case import Case


def _case(i: int) -> Case:
    return Case("latency", "layernorm", f"i{i}", {"samples": 20}, 0, f"c{i}")


def _runs(ab: dict, aa: dict, jitter: float = 0.01, k: int = 5):
    """k processes; case i's per-process ratios are ab[i] and aa[i] times a fixed ±jitter pattern."""
    wobble = [1 + jitter * (j - (k - 1) / 2) / ((k - 1) / 2) for j in range(k)]
    runs = []
    for j in range(k):
        recs = {}
        for i, r in ab.items():
            if isinstance(r, str):
                recs[f"c{i}"] = {"case_id": f"c{i}", "error": r, "unavailable": r.startswith("Unavailable")}
            else:
                recs[f"c{i}"] = {"case_id": f"c{i}", "ab": r * wobble[j], "aa": aa[i] * wobble[-1 - j]}
        runs.append(("both", recs))
    return runs


def _judge(ab, aa, **kw):
    cases = [_case(i) for i in ab]
    rows, typical, widest = judge(cases, {c.case_id: c.impl for c in cases}, _runs(ab, aa, **kw), ABOptions())
    result = ABResult("b", "0" * 40, "h", "in-process", 1.1, "paired", 5, typical, widest, rows, 1.0)
    return {r.case: r for r in rows}, result


def test_case_spread_is_the_standard_error_of_the_median_or_the_aa_offset():
    same = [1.0] * 5
    assert case_spread(same, same) == 1.0
    assert math.isclose(case_spread(same, [1.2] * 5), 1.2)  # two builds of the same code 1.2x apart: a bias
    wide = [0.9, 0.95, 1.0, 1.05, 1.1]
    assert 1.05 < case_spread(wide, wide) < 1.15
    assert case_spread([1.0], [1.0]) == math.inf  # one process: no spread, nothing certified


def test_marks_from_the_interval_against_the_factor():
    ab = {
        0: 1.0,
        1: 1.31,
        2: 0.7,
        3: 1.095,
        4: 1.04,
        5: "RuntimeError: planted",
        6: "UnavailableCase: no apex",
    }
    aa = dict.fromkeys(ab, 1.0)
    rows, result = _judge(ab, aa)
    marks = {name: r.mark for name, r in rows.items()}
    # S ~ 1.009 here: 1.04 x S < 1.1 is certified; 1.095 x S straddles the factor
    assert marks == {"i0": "=", "i1": "+", "i2": "-", "i3": "?", "i4": "=", "i5": "x", "i6": "="}
    assert exit_code(result) == 1
    assert 1.0 < result.aa_spread < 1.02


def test_a_wide_aa_spread_makes_a_change_inconclusive_never_a_pass():
    ab = {0: 1.0, 1: 1.2}
    aa = {0: 1.25, 1: 1.0}  # case 0's two head builds differ by 1.25x: its A/A spread
    rows, result = _judge(ab, aa)
    assert rows["i0"].mark == "?" and math.isclose(rows["i0"].spread, 1.25, rel_tol=1e-6)
    assert rows["i1"].mark == "+"  # 1.2 / S(1.01) > 1.1
    noisy, result = _judge({0: 1.05}, {0: 1.0}, jitter=0.2)  # processes 20% apart: nothing certified
    assert noisy["i0"].mark == "?" and exit_code(result) == 3


def test_nothing_timed_is_not_a_pass():
    result = ABResult("b", "0" * 40, "h", "in-process", 1.1, "paired", 5, math.inf, math.inf, [], 1.0)
    assert exit_code(result) == 3
