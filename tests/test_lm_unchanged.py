"""The decoder-only and masked LMs keep every case id and every stored value they had before the encoder-decoder existed (golden files)."""

import json
from pathlib import Path

import pytest

from normbench.benches import RunContext
from normbench.core.tolerance import training_tolerance
from normbench.runner import run_one
from normbench.suite.expand import expand
from normbench.suite.load import load_suite, parse_suite

ROOT = Path(__file__).parent.parent
GOLDEN = ROOT / "tests" / "golden"
# written by the code before the encoder-decoder existed: the stability and init case ids of every shipped suite
IDS = json.loads((GOLDEN / "lm_case_ids.json").read_text())
VALUES = json.loads((GOLDEN / "lm_stability_values.json").read_text())
# the runner's clock and load readings: not results of the case
CLOCK = ("train_wall_s", "case_wall_s", "loadavg_1m", "case_started_unix", "case_finished_unix")


@pytest.mark.parametrize("name", sorted(IDS))
def test_every_stored_lm_case_keeps_its_id(name):
    cases = [
        c for c in expand(load_suite(ROOT / "suites" / f"{name}.toml")) if c.kind in ("stability", "init")
    ]
    assert {c.case_id for c in cases} == set(IDS[name])


def test_fixed_seed_lm_rows_are_the_values_stored_before():
    """Causal and masked, Post-LN and DeepNorm: the same case ids, statuses and rows. Equal on this machine;
    another CPU may round differently, hence the project's cross-machine training tolerance."""
    cases = list(expand(parse_suite(VALUES["suite"])))
    assert [c.case_id for c in cases] == [g["case_id"] for g in VALUES["cases"]]
    for case, golden in zip(cases, VALUES["cases"], strict=True):
        rows, status, _ = run_one(case, RunContext(threads=1))
        assert status == golden["status"]
        got = [
            [r["metric"], r.get("step"), r.get("layer"), r.get("site"), r["value"]]
            for r in rows
            if r["metric"] not in CLOCK
        ]
        assert [g[:4] for g in got] == [g[:4] for g in golden["rows"]]
        tol = training_tolerance(case.params["steps"])
        bad = [
            (g[:4], g[4], w[4]) for g, w in zip(got, golden["rows"], strict=True) if not tol.close(g[4], w[4])
        ]
        assert not bad, bad[:5]
