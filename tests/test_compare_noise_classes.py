"""compare judges cold-cache timings apart from warm ones: their run-to-run noise is larger, so a cold case
too few to estimate its own noise that moves beyond --factor is x (inconclusive), never + or a pass; warm
cases keep their noise, and a cold class with enough cases gets its own."""

from __future__ import annotations

import json
import random

import pandas as pd

from normbench.analysis.compare.frames import compare_frames
from normbench.analysis.compare.options import CompareOptions

ENV = {"cpu": "X", "cpu_count": 2, "torch": "2.13.0", "torch_threads": 1, "python": "3.11"}


def frame(run: str, cases: dict[str, tuple[str, float]], seed: int) -> pd.DataFrame:
    """One latency case per impl (its cache state and time_vs_ref), 30 per-round ratios around it."""
    rng, rows = random.Random(seed), []
    for impl, (cache, value) in cases.items():
        params = json.dumps({"d": 64, "cache": cache, "impl_key": impl})
        level = value * (1 + rng.gauss(0, 0.01))  # this run's level of the case: 1% run-to-run noise
        for i in range(30):
            rows.append(
                {
                    "run_id": run, "bench": "latency", "case_id": f"c-{impl}", "norm": "layernorm",
                    "impl": impl, "params": params, "status": "ok", "metric": "time_vs_ref", "unit": "ratio",
                    "value": level * (1 + (i - 14.5) / 3000), "sample": float(i),
                }
            )  # fmt: skip
    return pd.DataFrame(rows)


def marks(base, new):
    result = compare_frames(base, new, ENV, ENV, CompareOptions())
    return {r.case.split()[0]: r for r in result.rows if r.metric == "time_vs_ref"}, result


WARM = {f"w{k}": ("warm", 1 + k / 10) for k in range(10)}


def test_a_lone_cold_case_beyond_the_factor_is_inconclusive_not_a_regression():
    base = {**WARM, "cold": ("cold", 2.0)}
    rows, _ = marks(frame("a", base, 1), frame("b", {**base, "cold": ("cold", 2.5)}, 2))
    assert rows["layernorm:cold"].mark == "x" and "cache=cold" in rows["layernorm:cold"].note
    assert {r.mark for case, r in rows.items() if case != "layernorm:cold"} <= {"=", "~"}


def test_a_lone_cold_case_within_the_factor_is_not_flagged():
    base = {**WARM, "cold": ("cold", 2.0)}
    rows, _ = marks(frame("a", base, 1), frame("b", {**base, "cold": ("cold", 2.04)}, 2))
    assert rows["layernorm:cold"].mark in ("=", "~")


def test_a_warm_case_beyond_the_factor_is_still_a_regression():
    base = {**WARM, "cold": ("cold", 2.0)}
    rows, _ = marks(frame("a", base, 1), frame("b", {**base, "w3": ("warm", 1.3 * 1.3)}, 2))
    assert rows["layernorm:w3"].mark == "+"


def test_enough_cold_cases_get_their_own_noise():
    cold = {f"c{k}": ("cold", 2 + k / 10) for k in range(8)}
    base = {**WARM, **cold}
    _, result = marks(frame("a", base, 1), frame("b", base, 2))
    assert sum("run-to-run noise" in n and "[cache=cold]" in n for n in result.notes) == 1


def test_a_cold_class_above_the_factor_is_named_in_the_inconclusive_line():
    """A cold class with its own noise, too large for --factor: the gate's line names the class."""
    cold = {f"c{k}": ("cold", 2 + k / 10) for k in range(8)}
    base = {**WARM, **cold}
    new = {**WARM, **{k: (c, v * (1.3 if int(k[1:]) % 2 else 1 / 1.3)) for k, (c, v) in cold.items()}}
    _, result = marks(frame("a", base, 1), frame("b", new, 2))
    assert any(
        line.startswith("latency[cache=cold]/time_vs_ref: the noise floor") for line in result.undetectable
    )
