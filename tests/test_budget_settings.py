"""Under a token budget `batch` is unused, so it names no setting; and bn_fluctuation_above_cnn judges each
masked-LM batcher apart (the token budget judged, fixed rows the stress cell) against the CNN's BatchNorm at
its best recipe, never pooling the two batchers' seeds into one interval."""

from __future__ import annotations

import json

import pandas as pd
from _norms_support import frame, training_run
from test_cnn import planted

from normbench.analysis.claims import evaluate


def batcher(rows, max_tokens: int, batch: int):
    """One run's rows batched under `max_tokens` (0: fixed `batch` rows a batch)."""
    out = []
    for r in rows:
        params = {**json.loads(r["params"]), "max_tokens": max_tokens, "batch": batch}
        cid = f"{r['case_id']}-{max_tokens}"
        out.append(
            {**r, "max_tokens": max_tokens, "batch": batch, "params": json.dumps(params), "case_id": cid}
        )
    return out


def fluct(value):
    shift = {"bn_mean_shift_sd": [value] * 30, "bn_var_shift": [value] * 30}
    return {
        (1, "1.attn"): {"bn_mean_rel_dist": [value] * 30, "bn_mean_rel_dist_iid": [value / 2] * 30, **shift}
    }


def lm_runs(budget_shift: float, fixed_shift: float):
    """BatchNorm and LayerNorm on both batchers (budget at the unused default batch 16, fixed rows at 32)."""
    rows = []
    for s in range(3):
        for max_tokens, batch, shift in ((1152, 16, budget_shift), (0, 32, fixed_shift)):
            bn = training_run("batchnorm", s, 2.2 + s / 100, fluctuation=fluct(shift * (1 + s / 20)))
            rows += [
                batcher(bn, max_tokens, batch),
                batcher(training_run("layernorm", s, 2.0), max_tokens, batch),
            ]
    return frame(*rows)


def verdict(name, df):
    return evaluate([name], df).set_index("claim").loc[name]


def test_a_budget_setting_is_not_labelled_with_the_unused_batch():
    v = verdict("bn_masked_lm_worse_than_ln", lm_runs(0.5, 0.5))
    assert "[max_tokens=1152]" in v["numbers"] and "[max_tokens=0] stress cell" in v["numbers"]
    assert "batch=16" not in v["numbers"] and v["verdict"] == "PASS"  # BN − LN +0.21: the pairs still form


def test_fluctuation_claim_judges_each_batcher_against_the_cnn():
    cnn = planted({"batchnorm": [0.3, 0.3, 0.3]}, shift=0.01)  # CNN's |μ_B − μ|/σ ≈ 0.01
    budget_passes = pd.concat([lm_runs(0.5, 0.05), cnn], ignore_index=True)
    v = verdict("bn_fluctuation_above_cnn", budget_passes)
    assert v["verdict"] == "PASS" and "stress cell, fixed rows (would read FAIL, not judged)" in v["numbers"]
    assert "[max_tokens=1152]" in v["numbers"] and v["CI"].count("Transformer") == 2
    # the budget is the claims' setting: its failure is the claim's, however far the fixed rows fluctuate
    budget_fails = pd.concat([lm_runs(0.05, 0.5), cnn], ignore_index=True)
    assert verdict("bn_fluctuation_above_cnn", budget_fails)["verdict"] == "FAIL"
