"""compare judges a paired ratio beyond its round set's common shift (the reference's own level moving
between runs is not a change of every member), and a change needs both references to agree: a case moved
against one reference alone is ~, never +."""

from __future__ import annotations

import pandas as pd

from normbench.analysis.compare.frames import compare_frames
from normbench.analysis.compare.options import CompareOptions

ENV = {"cpu": "X", "cpu_count": 2, "torch": "2.13.0", "torch_threads": 1, "python": "3.11"}


def frame(run: str, ratios: dict[str, dict[str, float]], round_set: str = "set1") -> pd.DataFrame:
    """One latency case per impl; per metric 30 raw per-round ratios tightly around the given value."""
    rows = []
    for impl, metrics in ratios.items():
        params = f'{{"d": 64, "impl_key": "{impl}"}}'
        for metric, value in metrics.items():
            for i in range(30):
                rows.append(
                    {
                        "run_id": run, "bench": "latency", "case_id": f"c-{impl}", "norm": "layernorm",
                        "impl": impl, "params": params, "status": "ok", "metric": metric, "unit": "ratio",
                        "value": value * (1 + (i - 14.5) / 3000), "sample": float(i), "round_set": round_set,
                    }
                )  # fmt: skip
    return pd.DataFrame(rows)


def marks(base, new, factor=1.1):
    result = compare_frames(base, new, ENV, ENV, CompareOptions(factor=factor))
    return {(r.case.split()[0], r.metric): r for r in result.rows if r.metric.startswith("time_vs")}


BASE = {f"i{k}": {"time_vs_ref": 1 + k / 10, "time_vs_copy": 3 + k / 5} for k in range(8)}


def test_a_shift_shared_by_the_whole_round_set_is_not_a_change_of_each_member():
    moved = {
        i: {"time_vs_ref": m["time_vs_ref"] * 1.15, "time_vs_copy": m["time_vs_copy"]}
        for i, m in BASE.items()
    }
    rows = marks(frame("a", BASE), frame("b", moved))
    ref_rows = [r for (case, metric), r in rows.items() if metric == "time_vs_ref"]
    assert {r.mark for r in ref_rows} == {"="}
    assert all(abs(r.shift - 1.15) < 1e-3 and "beyond its round set" in r.note for r in ref_rows)


def test_a_member_that_moved_beyond_its_set_against_both_references_is_a_regression():
    slowed = {i: dict(m) for i, m in BASE.items()}
    slowed["i3"] = {k: v * 1.3 for k, v in BASE["i3"].items()}
    rows = marks(frame("a", BASE), frame("b", slowed))
    assert rows[("layernorm:i3", "time_vs_ref")].mark == "+"
    assert rows[("layernorm:i3", "time_vs_copy")].mark == "+"
    assert {r.mark for (case, _), r in rows.items() if case != "layernorm:i3"} == {"="}


def test_a_member_that_moved_against_one_reference_only_is_not_confirmed():
    one = {i: dict(m) for i, m in BASE.items()}
    one["i5"] = {"time_vs_ref": BASE["i5"]["time_vs_ref"], "time_vs_copy": BASE["i5"]["time_vs_copy"] * 1.3}
    rows = marks(frame("a", BASE), frame("b", one))
    row = rows[("layernorm:i5", "time_vs_copy")]
    assert row.mark == "~" and "not confirmed by the other reference" in row.note


def test_the_member_compared_against_counts_in_its_set():
    """A set of the reference and two others: when the copy probe alone speeds up, every time_vs_copy rises
    together. The probe is a member whose ratio to itself stays 1, so the set has four members and a shift:
    nothing is flagged (without it the reference, with no second ratio to confirm, read as a regression)."""
    base = {"ref": {"time_vs_copy": 2.0}, "a": {"time_vs_ref": 1.4, "time_vs_copy": 2.8}}
    base["b"] = {"time_vs_ref": 3.0, "time_vs_copy": 6.0}
    faster_probe = {
        i: {k: v * (1.13 if k == "time_vs_copy" else 1) for k, v in m.items()} for i, m in base.items()
    }
    rows = marks(frame("a", base), frame("b", faster_probe))
    copy_rows = [r for (_, metric), r in rows.items() if metric == "time_vs_copy"]
    assert {r.mark for r in rows.values()} == {"="}
    assert all(abs(r.shift - 1.13) < 1e-3 for r in copy_rows)
