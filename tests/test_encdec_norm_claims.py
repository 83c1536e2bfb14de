"""The PowerNorm paper's translation claims (BatchNorm in the encoder worse than LayerNorm; PowerNorm not
behind LayerNorm and ahead of BatchNorm) are judged on encoder-decoder runs only, per setting, and the
DeepNet encoder-decoder claims leave those runs out."""

from __future__ import annotations

import json

from _norms_support import frame, training_run

from normbench.analysis.claims import evaluate
from normbench.analysis.claims.encdec import encdec_runs

PN = "powernorm:official"


def encdec_run(norm, seed, loss):
    rows = training_run(norm, seed, loss, objective="causal", batching="windows")
    params = json.loads(rows[0]["params"]) | {"enc_depth": 0, "dec_depth": 0}
    return [
        {**r, **params, "bench": "encdec", "params": json.dumps(params), "case_id": r["case_id"] + "encdec"}
        for r in rows
    ]


def verdict(name, df):
    return evaluate([name], df).set_index("claim").loc[name]


def runs(losses):
    return frame(*[encdec_run(n, s, v) for n, vs in losses.items() for s, v in enumerate(vs)])


def test_the_papers_ordering_passes():
    df = runs({"layernorm": [2.0, 2.02, 2.04], "batchnorm:official": [2.2, 2.25, 2.3], PN: [2.0, 2.01, 2.05]})
    assert verdict("encdec_bn_encoder_worse_than_ln", df)["verdict"] == "PASS"
    v = verdict("encdec_pn_encoder_matches_ln_beats_bn", df)
    assert v["verdict"] == "PASS" and "batchnorm:official − PN [" in v["CI"]


def test_a_powernorm_behind_batchnorm_or_layernorm_fails():
    df = runs({"layernorm": [2.0, 2.02, 2.04], "batchnorm": [2.01, 2.0, 2.05], PN: [2.2, 2.21, 2.23]})
    assert verdict("encdec_bn_encoder_worse_than_ln", df)["verdict"] == "FAIL"
    assert verdict("encdec_pn_encoder_matches_ln_beats_bn", df)["verdict"] == "FAIL"


def test_the_claims_need_encoder_decoder_runs_and_deepnet_claims_skip_them():
    lm = frame(*[training_run(n, s, 2.0 + s / 50) for n in ("layernorm", "batchnorm", PN) for s in range(3)])
    assert verdict("encdec_bn_encoder_worse_than_ln", lm)["verdict"] == "NO DATA"
    df = runs({"layernorm": [2.0, 2.02, 2.04], "batchnorm": [2.3, 2.25, 2.4], PN: [2.0, 2.01, 2.05]})
    assert set(encdec_runs(df)["norm"]) == {"layernorm"}
