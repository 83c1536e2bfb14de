"""DeepNet Fig. 4(a) as a windowed claim: stuck Post-LN runs whose update plateaus by step 10 while the
learners keep moving PASS; a stuck run still moving, or learners as flat as the stuck runs, FAIL."""

from __future__ import annotations

import json

import pandas as pd

from normbench.analysis.claims import evaluate


def run(placement, init, warmup, seed, curve, status):
    """One training run's rows: model_update at steps 1, 10, 100, 300 from `curve`."""
    params = {"placement": placement, "init": init, "warmup": warmup, "depth": 12, "seed": seed, "lr": 1e-3}
    params |= {"d": 64, "steps": 300, "judge": True, "optimizer": "adam", "train": "all"}
    base = {"bench": "stability", "norm": "layernorm", "impl": "module", "status": status}
    base |= {"case_id": json.dumps(params, sort_keys=True), "params": json.dumps(params), **params}
    rows = [{"metric": "final_loss", "value": 3.0 if status == "stuck" else 1.5, "step": None}]
    rows += [{"metric": "unigram_loss", "value": 3.0, "step": None}]
    rows += [{"metric": "grad_norm", "value": 1.0, "step": 1, "site": "block", "layer": 12}]
    rows += [{"metric": "last_ln_input_norm", "value": 9.0, "step": 300}]
    steps = (1, 10, 100, 300)
    rows += [{"metric": "model_update", "value": v, "step": s} for s, v in zip(steps, curve, strict=True)]
    return [{**base, **r} for r in rows]


def verdict(stuck_curve, learner_curve):
    rows = []
    for seed in range(3):
        jitter = 1 + seed / 100
        rows += run("post", "xavier", 0, seed, [v * jitter for v in stuck_curve], "stuck")
        rows += run("pre", "xavier", 0, seed, [v * jitter for v in learner_curve], "ok")
        rows += run("deepnorm", "deepnorm", 0, seed, [v * jitter for v in learner_curve], "ok")
    return evaluate(["postln_stuck_update_plateaus_early"], pd.DataFrame(rows)).iloc[0]


def test_a_stuck_plateau_and_moving_learners_pass():
    v = verdict([8.0, 11.0, 11.2, 11.3], [0.05, 1.3, 8.0, 10.0])
    assert v["verdict"] == "PASS", v["numbers"]
    assert "stuck Post-LN 0.97" in v["numbers"]


def test_a_stuck_run_still_moving_or_flat_learners_fail():
    assert verdict([1.0, 3.0, 8.0, 11.0], [0.05, 1.3, 8.0, 10.0])["verdict"] == "FAIL"
    assert verdict([8.0, 11.0, 11.2, 11.3], [5.0, 9.8, 10.0, 10.0])["verdict"] == "FAIL"


def test_no_stuck_runs_is_no_data():
    rows = run("pre", "xavier", 0, 0, [0.05, 1.3, 8.0, 10.0], "ok")
    v = evaluate(["postln_stuck_update_plateaus_early"], pd.DataFrame(rows)).iloc[0]
    assert v["verdict"] == "NO DATA"
