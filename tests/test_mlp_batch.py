"""The LN paper's MLP (cnn bench, model = "mlp"): its layers and where each norm sits, a run's rows, and the
batch-size claim judged on planted runs: LayerNorm robust and BatchNorm degrading PASSes; a LayerNorm that
degrades too, a BatchNorm that degrades no more than LayerNorm, or runs that saw different numbers of images
must not PASS; the CNN claims never read MLP runs."""

from __future__ import annotations

import json

import pandas as pd
import torch

from normbench.analysis.claims import evaluate
from normbench.benches import RunContext
from normbench.models.mlp import MLP, MLPConfig
from normbench.runner import run_one
from normbench.suite.expand import expand
from normbench.suite.load import parse_suite

CLAIM = "ln_batch_size_robust_bn_degrades"


def test_layernorm_spares_the_logits_and_batchnorm_normalizes_every_layer():
    ln, bn = MLP(MLPConfig("layernorm", hidden=32)), MLP(MLPConfig("batchnorm", hidden=32))
    assert [m.site for m in ln.norms()] == ["1.fc", "2.fc"] and isinstance(ln.head, torch.nn.Linear)
    assert [m.site for m in bn.norms()] == ["1.fc", "2.fc", "final"]
    x = torch.randn(6, 3, 16, 16)
    assert ln(x).shape == (6, 10) and bn(x).shape == (6, 10)
    logits = bn.train()(x)  # batch statistics on the logits: each class's logit has mean 0 over the batch
    assert torch.allclose(logits.mean(0), torch.zeros(10), atol=1e-5)
    assert len(MLP(MLPConfig("identity", hidden=8)).norms()) == 0


def test_an_mlp_run_stores_held_out_loss_and_first_bn_statistics():
    text = (
        'name = "t"\n[[bench]]\nkind = "cnn"\nnorms = ["batchnorm"]\n[bench.params]\nmodel = "mlp"\n'
        "hidden = 16\nsteps = 12\nbatch = 4\nevery = 4\ntrain_images = 256\nheld_out_images = 64\n"
        'optimizer = "adam"\nlr = 1e-3\n'
    )
    (case,) = expand(parse_suite(text))
    assert "model=mlp" in case.label
    rows, status, _ = run_one(case, RunContext(threads=1))
    metrics = {r["metric"] for r in rows}
    assert status == "ok" and {"final_loss", "accuracy", "bn_mean_shift_sd"} <= metrics
    assert {r["site"] for r in rows if r["metric"] == "bn_mean_shift_sd"} == {"1.fc", "2.fc", "final"}


def planted(changes: dict, large_steps=128, small_steps=4096, cnn_too=False):
    """Held-out losses per norm: {norm: (losses at batch 128, losses at batch 4)}, one per seed."""
    rows = []
    for norm, by_batch in changes.items():
        for batch, steps, losses in ((128, large_steps, by_batch[0]), (4, small_steps, by_batch[1])):
            for seed, loss in enumerate(losses):
                params = {"seed": seed, "model": "mlp", "hidden": 256, "batch": batch, "steps": steps}
                params |= {"optimizer": "adam", "lr": 1e-3}
                base = {
                    "bench": "cnn",
                    "norm": norm,
                    "impl": None,
                    "status": "ok",
                    "params": json.dumps(params),
                }
                base |= {"case_id": f"{norm}{seed}{batch}", "sample": None, "layer": None, **params}
                rows += [
                    {**base, "metric": "final_loss", "value": loss, "step": None},
                    {**base, "metric": "accuracy", "value": 1 - loss / 3, "step": None},
                ]
    return pd.DataFrame(rows)


def verdict(df):
    return evaluate([CLAIM], df).set_index("claim").loc[CLAIM]


LN = (
    [1.09, 1.10, 1.08, 1.11],
    [0.96, 0.97, 0.95, 0.99],
)  # batch 4 a little better: the same images, more updates


def test_layernorm_robust_and_batchnorm_degrading_passes():
    v = verdict(planted({"layernorm": LN, "batchnorm": ([1.38, 1.40, 1.37, 1.39], [2.27, 2.25, 2.28, 2.30])}))
    assert v["verdict"] == "PASS" and "batch 128 → 4" in v["numbers"] and v["seeds"] == "4 (0–3)"


def test_a_batchnorm_that_degrades_no_more_than_layernorm_fails():
    """Planted: both lose 0.3 nats at batch 4, so nothing is BatchNorm's own."""
    same = ([1.09, 1.10, 1.08, 1.11], [1.39, 1.41, 1.38, 1.40])
    v = verdict(planted({"layernorm": same, "batchnorm": ([1.2, 1.21, 1.19, 1.2], [1.5, 1.52, 1.49, 1.51])}))
    assert v["verdict"] == "FAIL"


def test_a_layernorm_that_degrades_fails_however_bad_batchnorm_is():
    worse = ([1.09, 1.10, 1.08, 1.11], [1.29, 1.31, 1.27, 1.30])  # +0.2 at batch 4: not robust
    v = verdict(planted({"layernorm": worse, "batchnorm": ([1.4, 1.4, 1.4, 1.4], [2.3, 2.3, 2.3, 2.3])}))
    assert v["verdict"] == "FAIL"


def test_runs_that_saw_different_numbers_of_images_are_no_data_and_cnn_claims_ignore_mlp_runs():
    bn = ([1.38, 1.40, 1.37, 1.39], [2.27, 2.25, 2.28, 2.30])
    assert verdict(planted({"layernorm": LN, "batchnorm": bn}, small_steps=128))["verdict"] == "NO DATA"
    assert verdict(planted({"layernorm": LN}))["verdict"] == "NO DATA"
    mlp_only = planted({"layernorm": LN, "batchnorm": bn})
    assert evaluate(["bn_cnn_beats_ln"], mlp_only).iloc[0]["verdict"] == "NO DATA"
