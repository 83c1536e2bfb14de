"""The CNN control: the generated shapes are seeded and standardized, each norm runs in its definition's
layout (BatchNorm = BatchNorm2d per channel, LayerNorm over each image's C·H·W units), the bench stores loss,
accuracy and BatchNorm's statistics rows, and its claims reach PASS / FAIL / NO DATA on planted runs."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from normbench.analysis.claims import evaluate
from normbench.benches import RunContext, get_bench
from normbench.data.images import CLASSES, SIZE, draw, shape_masks, shapes_data
from normbench.models.cnn import CNNConfig, SmallCNN
from normbench.runner import run_one
from normbench.suite.expand import expand
from normbench.suite.load import parse_suite


def test_images_are_seeded_standardized_and_every_class_is_a_different_shape():
    a, b = shapes_data(3, 256, 32), shapes_data(3, 256, 32)
    assert torch.equal(a.train, b.train) and torch.equal(a.held_out_labels, b.held_out_labels)
    assert not torch.equal(a.train, shapes_data(4, 256, 32).train)
    assert a.train.shape == (256, 3, SIZE, SIZE)
    torch.testing.assert_close(a.train.mean((0, 2, 3)), torch.zeros(3), atol=1e-5, rtol=0)
    torch.testing.assert_close(a.train.std((0, 2, 3)), torch.ones(3), atol=1e-5, rtol=0)
    grid = torch.arange(SIZE, dtype=torch.float32) - 8
    dy, dx = torch.meshgrid(grid, grid, indexing="ij")
    masks = shape_masks(dx[None], dy[None], torch.tensor(5.0)).reshape(len(CLASSES), -1)
    assert len({tuple(m.tolist()) for m in masks}) == len(CLASSES)  # ten distinct shapes
    _, labels = draw(2000, torch.Generator().manual_seed(0))
    assert torch.bincount(labels, minlength=10).min() > 150  # every class drawn, roughly evenly


def test_batchnorm_runs_per_channel_and_layernorm_over_each_image():
    torch.manual_seed(0)
    x = torch.randn(6, 3, SIZE, SIZE)
    for norm in ("batchnorm", "layernorm"):
        torch.manual_seed(0)
        block = SmallCNN(CNNConfig(norm=norm)).blocks[0]
        h = block.conv(x)
        if norm == "batchnorm":
            want = F.batch_norm(h, None, None, training=True, eps=1e-5)  # BatchNorm2d: (B, H, W) per channel
        else:
            want = F.layer_norm(h, h.shape[1:], eps=1e-5)  # the LN paper's: all C·H·W units of the image
        torch.testing.assert_close(block(x), torch.relu(want), rtol=1e-5, atol=1e-5)
    assert SmallCNN(CNNConfig(norm="identity")).norms() == []


def cnn_suite(norms, **params):
    tiny = {"steps": 12, "train_images": 256, "held_out_images": 64, "batch": 16, "every": 4, **params}
    lines = "".join(f"{k} = {json.dumps(v)}\n" for k, v in tiny.items())
    return f'name = "t"\n[[bench]]\nkind = "cnn"\nnorms = {json.dumps(norms)}\n[bench.params]\n{lines}'


def test_a_cnn_run_stores_loss_accuracy_and_batch_statistics():
    ctx = RunContext(threads=1)
    results = {c.norm: run_one(c, ctx) for c in expand(parse_suite(cnn_suite(["batchnorm", "layernorm"])))}
    for norm, (rows, status, _) in results.items():
        final = {r["metric"]: r["value"] for r in rows if r.get("step") is None}
        assert status == "ok" and 0 <= final["accuracy"] <= 1 and final["final_loss"] > 0
        assert len([r for r in rows if r["metric"] == "loss"]) == 12
        stats = {r["site"] for r in rows if r["metric"] == "bn_mean_shift_sd"}
        assert stats == ({f"{i}.conv" for i in range(1, 7)} if norm == "batchnorm" else set())
    frame = pd.concat(
        [
            pd.DataFrame(rows).assign(
                bench="cnn",
                norm=norm,
                impl=None,
                status=status,
                case_id=norm,
                params=json.dumps({"seed": 0}),
                seed=0,
            )
            for norm, (rows, status, _) in results.items()
        ],
        ignore_index=True,
    )
    (table,) = get_bench("cnn").report(frame, None)
    assert set(table.frame["norm"]) == {"batchnorm", "layernorm"} and "first BN |μ_B − μ|/σ" in table.frame
    assert "batchnorm" in get_bench("cnn").headline(frame, None)[0]
    again = run_one(expand(parse_suite(cnn_suite(["batchnorm"])))[0], RunContext(threads=1))
    assert [r["value"] for r in again[0] if r["metric"] == "loss"] == [
        r["value"] for r in results["batchnorm"][0] if r["metric"] == "loss"
    ]


def planted(losses: dict, shift=0.01, lr=0.05, optimizer="sgd"):
    rows = []
    for norm, values in losses.items():
        for seed, loss in enumerate(values):
            params = {"seed": seed, "steps": 500, "lr": lr, "width": 8, "optimizer": optimizer}
            base = {"bench": "cnn", "norm": norm, "impl": None, "status": "ok", "params": json.dumps(params)}
            base |= {"case_id": f"{norm}{seed}{optimizer}{lr}", "sample": None, **params}
            rows += [
                {**base, "metric": "final_loss", "value": loss, "step": None},
                {**base, "metric": "accuracy", "value": 1 - loss / 3, "step": None},
                {**base, "metric": "train_wall_s", "value": 1.0, "step": None},
            ]
            if norm == "batchnorm":
                stats = {"bn_mean_shift_sd": shift, "bn_var_shift": shift}
                stats |= {"bn_mean_rel_dist": 1.0, "bn_mean_rel_dist_iid": 0.5}
                rows += [
                    {**base, "metric": m, "value": v * (1 + seed / 50), "step": s, "layer": 1}
                    for s in (10, 20, 30)
                    for m, v in stats.items()
                ]
    return pd.DataFrame(rows)


def state(name, df):
    return evaluate([name], df).set_index("claim").loc[name, "verdict"]


def test_cnn_claims_on_planted_runs():
    wins = planted(
        {"batchnorm": [0.30, 0.32, 0.31], "layernorm": [0.50, 0.55, 0.52], "identity": [0.9, 0.95, 0.92]}
    )
    assert state("bn_cnn_beats_ln", wins) == "PASS"
    assert state("ln_cnn_beats_no_norm", wins) == "PASS"
    close = planted({"batchnorm": [0.30, 0.32, 0.31], "layernorm": [0.33, 0.34, 0.35]})  # 0.03: not 0.05
    assert state("bn_cnn_beats_ln", close) == "FAIL"
    loses = planted({"batchnorm": [0.60, 0.62, 0.61], "layernorm": [0.30, 0.32, 0.31]})
    assert state("bn_cnn_beats_ln", loses) == "FAIL"
    assert state("ln_cnn_beats_no_norm", loses) == "NO DATA"  # no identity runs
    assert state("bn_cnn_beats_ln", planted({"batchnorm": [0.3, 0.3]})) == "NO DATA"


@pytest.mark.parametrize(("lm", "expected"), [(0.5, "PASS"), (0.05, "FAIL")])
def test_transformer_fluctuation_against_the_cnns(lm, expected):
    from _norms_support import frame, training_run

    def fluct(value):
        shift = {"bn_mean_shift_sd": [value] * 30, "bn_var_shift": [value] * 30}
        return {
            (1, "1.attn"): {
                "bn_mean_rel_dist": [value] * 30,
                "bn_mean_rel_dist_iid": [value / 2] * 30,
                **shift,
            }
        }

    transformer = frame(
        *[training_run("batchnorm", s, 2.3, fluctuation=fluct(lm * (1 + s / 20))) for s in range(3)]
    )
    cnn = planted({"batchnorm": [0.3, 0.3, 0.3]}, shift=0.01)
    both = pd.concat([transformer, cnn], ignore_index=True)
    assert state("bn_fluctuation_above_cnn", both) == expected
    assert state("bn_fluctuation_above_cnn", cnn) == "NO DATA"


def test_each_norm_is_judged_at_its_best_recipe_and_no_speedup_over_a_plain_cnn_at_chance():
    """At SGD 0.05 LayerNorm half-fails and the plain CNN sits at chance (ln 10 = 2.303); under Adam all
    train. BatchNorm's win at the shared lr is LayerNorm's bad recipe: at each norm's best they tie (FAIL);
    the plain CNN at chance at every recipe makes the speedup claim NO DATA, never a vacuous PASS."""
    sgd = planted({"batchnorm": [0.30, 0.32, 0.31], "layernorm": [1.2, 1.3, 1.1], "identity": [2.303] * 3})
    adam = planted(
        {"batchnorm": [0.31, 0.31, 0.32], "layernorm": [0.30, 0.33, 0.31], "identity": [2.30, 2.31, 2.305]},
        lr=1e-3,
        optimizer="adam",
    )
    both = pd.concat([sgd, adam])
    assert state("bn_cnn_beats_ln", sgd) == "PASS"  # one shared recipe: LayerNorm's bad lr decides it
    assert state("bn_cnn_beats_ln", both) == "FAIL"  # at each one's best: a tie
    assert state("ln_cnn_beats_no_norm", both) == "NO DATA"
    learns = planted(
        {"layernorm": [0.30, 0.33, 0.31], "identity": [0.9, 0.95, 0.92]}, lr=1e-3, optimizer="adam"
    )
    assert state("ln_cnn_beats_no_norm", pd.concat([sgd, learns])) == "PASS"
