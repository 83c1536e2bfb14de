"""ab never cries wolf on one odd process: the A/A spread is a median-based scale that one outlier process does
not widen, a case left ? after k processes is timed in k more once (and only it), and a result that timed
nothing says so in words; --format md is a pull-request comment within GitHub's limits."""

from __future__ import annotations

import math

from normbench.ab.comment import MARKER, render_comment
from normbench.ab.gate import (
    SAME_CODE,
    ABCase,
    ABResult,
    case_spread,
    judge_with_second_look,
)
from normbench.ab.options import ABOptions
from normbench.ab.report import render_text, verdict_line
from normbench.core.case import Case
from normbench.core.comment import COMMENT_CHARS, ROW_CHARS

# stored per-process ratios of comment-only changes (head and base the same code): one far-off process each
OUTLIER_AB = [0.97, 0.44, 1.01, 0.95, 0.95]
OUTLIER_AA = [1.02, 1.01, 2.16, 0.98, 1.01]


def _records(ratios: dict[str, float]) -> dict:
    """One process's records: head/base ratio r, and an A/A of the same size the other way (1 / r)."""
    return {cid: {"case_id": cid, "ab": r, "aa": 1 / r} for cid, r in ratios.items()}


def test_one_outlier_process_does_not_widen_the_spread():
    steady = [0.98, 0.99, 1.0, 1.01, 1.02]
    assert case_spread(OUTLIER_AB, steady) < 1.1  # the pooled variance put this one near x1.4
    assert case_spread(steady, OUTLIER_AA) < 1.1
    assert case_spread(OUTLIER_AB, OUTLIER_AA) < case_spread([0.8, 0.9, 1.0, 1.1, 1.25], steady)


def test_the_second_look_retimes_only_the_inconclusive_cases_once():
    cases = [Case("latency", "rmsnorm", i, {}, 0, i) for i in ("steady", "noisy")]
    labels = {c.case_id: c.impl for c in cases}
    first = [("both", _records({"steady": 1.0, "noisy": r})) for r in (0.8, 0.9, 1.0, 1.1, 1.25)]
    asked = []

    def retime(unsure):
        asked.append([c.case_id for c in unsure])
        return [("both", _records({"noisy": r})) for r in (0.99, 1.0, 1.0, 1.01, 1.0)]

    rows, looked = judge_with_second_look(cases, labels, first, ABOptions(), retime)
    assert asked == [["noisy"]] and looked == 1  # once, and only the ? case
    noisy = next(r for r in rows if r.case_id == "noisy")
    assert len(noisy.per_process["paired"]) == 10 and noisy.mark == "="  # judged on all 2k processes
    rows, looked = judge_with_second_look(cases, labels, first, ABOptions(second_look=False), retime)
    assert looked == 0 and len(asked) == 1 and next(r for r in rows if r.case_id == "noisy").mark == "?"


def _result(cases, **kw) -> ABResult:
    return ABResult("origin/main", "a" * 40, "b" * 7, "in-process", 1.1, "paired", 5, *kw.pop("spreads", (1.02, 1.05)), cases, 80.0, **kw)  # fmt: skip


def test_nothing_timed_says_so_and_prints_no_spread():
    same = [ABCase(f"s{i}", "latency", "rmsnorm:module", mark="=", note=SAME_CODE) for i in range(4)]
    result = _result(same, spreads=(math.nan, math.nan), deterministic=[{"mark": "="}] * 3)
    line = verdict_line(result)
    assert line.startswith("PASS: no norm code changed: nothing timed; deterministic benches equal")
    assert "inf" not in line and "nan" not in line
    assert "No norm code changed" in render_comment(result)
    assert "Not timed, the same norm code at base and head: 4 cases" in render_text(result, "plain")


def test_the_comment_of_a_regression_fits_github():
    slow = [
        ABCase(
            f"c{i}",
            "latency",
            "rmsnorm:functional shape=[8, 4096] cache=warm input=normal",
            ratio=1.3,
            lo=1.25,
            hi=1.35,
            aa=1.0,
            spread=1.03,
            mark="+",
            name="rmsnorm:functional",
            params={"tokens": 8 * i, "d": 4096, "dtype": "bfloat16", "note": "x" * 200},
            base_s=1.2e-5,
            head_s=1.56e-5,
        )
        for i in range(2000)
    ]
    same = [ABCase(f"s{i}", "latency", "layernorm:module", mark="=", note=SAME_CODE) for i in range(60)]
    text = render_comment(_result(slow + same))
    assert text.startswith(MARKER) and "> [!CAUTION]" in text and len(text) <= COMMENT_CHARS
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert rows and max(len(r) for r in rows) <= ROW_CHARS
    assert "every row: d=4096 dtype=bfloat16" in text  # shared parameters said once, in a caption
    assert "cache=warm" not in text  # defaults left out of the names
    assert "<details><summary>A/A noise and commits</summary>" in text and "a" * 40 in text
    assert "`=` not timed: the same norm code at base and head | 60 |" in text


def test_progress_lines_carry_the_elapsed_time_and_an_estimate_of_what_is_left():
    from normbench.ab.run import _progress

    said = []
    report = _progress(said.append, start=0.0, total=3)
    for i in range(3):
        report(f"process {i + 1}/3: 4 cases")
    report("second look: 1 inconclusive cases timed in 5 more processes")
    assert "s elapsed)" in said[0] and "to go" not in said[0]  # nothing done yet: no estimate
    assert all("s elapsed, about" in line and "s to go)" in line for line in said[1:3])
    assert said[3].startswith("second look") and "elapsed" not in said[3]
