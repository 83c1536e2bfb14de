"""One encoder-decoder stability case (model = "encdec"): its pairs (generated once per run), the seeded
model, the training run, and its rows. The status is judged by the bench (stability.status_of), as for the LM.

Details: docs/methodology.md, "Notes from the code"."""

from __future__ import annotations

import torch

from normbench.benches._lm.training import TrainSpec
from normbench.benches._stability.encdec_params import layers, pairs_identity
from normbench.benches._stability.encdec_training import train_encdec
from normbench.benches._tensors import check_device
from normbench.data.seq2seq_pairs import generate_pairs
from normbench.models.encdec import EncDecConfig, EncoderDecoder
from normbench.models.weight_init import CROSS_RESIDUAL, CROSS_WEIGHTS, RESIDUAL_WEIGHTS
from normbench.norms import get_norm

GROUPS = {  # site -> the matrix names of one stack's layers it pools
    "qk": ("q_proj", "k_proj"),
    "beta_scaled": RESIDUAL_WEIGHTS,
    "cross_qk": tuple(n for n in CROSS_WEIGHTS if n not in CROSS_RESIDUAL),
    "cross_beta_scaled": CROSS_RESIDUAL,
}


def load_pairs(ctx, p):
    """The case's pairs, generated once per run (a second or less)."""
    key = ("seq2seq", pairs_identity(p))
    if key not in ctx.memo:
        ctx.memo[key] = generate_pairs(p["task"], p["task_words"], p["min_len"], p["max_len"], p["data_seed"])
    return ctx.memo[key]


def build_encdec(case, vocab: int) -> EncoderDecoder:
    """The seeded model for a case: torch's global generator is seeded with `seed` right before."""
    p = case.params
    check_device(p["device"])
    torch.manual_seed(p["seed"])
    n, m = layers(p)
    cfg = EncDecConfig(
        vocab=vocab,
        enc_depth=n,
        dec_depth=m,
        d=p["d"],
        heads=p["heads"],
        ffn=p["ffn"],
        max_len=p["max_len"] + 1,  # the target's EOS
        placement=p["placement"],
        norm=case.norm,
        impl=case.impl,
        eps=p["eps"],
        init=p["init"],
        qk_init=p["qk_init"],
        embed=p["embed"],
        # batch statistics in the encoder only; the causal decoder keeps LayerNorm (models/encdec.py)
        dec_norm="layernorm" if get_norm(case.norm).mixes_tokens else "",
    )
    return EncoderDecoder(cfg).to(p["device"])


def train_spec(p) -> TrainSpec:
    return TrainSpec(
        lr=p["lr"],
        warmup=p["warmup"],
        steps=p["steps"],
        every=p["every"],
        batch=p["batch"],
        seq=p["max_len"],
        data_seed=p["data_seed"],
        schedule=p["schedule"],
        eval_batches=p["eval_batches"],
        optimizer=p["optimizer"],
        betas=(p["beta1"], p["beta2"]),
        momentum=p["momentum"],
        train=p["train"],
        max_tokens=p["max_tokens"],
    )


@torch.no_grad()
def construction_rows(model) -> list[dict]:
    # the α each stack's blocks use (what the forward reads), not the model's attribute it was built from:
    # the mean over the blocks, and the spread, which is 0 when every block has the one α
    rows = []
    for side, stack in (("enc", model.encoder), ("dec", model.decoder)):
        alphas = [float(b.alpha) for b in stack]
        rows += [
            {
                "metric": "residual_alpha",
                "unit": "ratio",
                "value": sum(alphas) / len(alphas),
                "step": 0,
                "site": side,
            },
            {
                "metric": "residual_alpha_spread",
                "unit": "ratio",
                "value": max(alphas) - min(alphas),
                "step": 0,
                "site": side,
            },
        ]
    for side, stack in (("enc", model.encoder), ("dec", model.decoder)):
        for site, names in GROUPS.items():
            weights = [lin.weight for b in stack for n, lin in b.linears().items() if n in names]
            if not weights:
                continue
            n = sum(w.numel() for w in weights)
            xavier_var = sum(w.numel() * 2.0 / (w.shape[0] + w.shape[1]) for w in weights)
            gain = float(sum(w.double().pow(2).sum() for w in weights) / xavier_var) ** 0.5
            common = {"step": 0, "site": f"{side}.{site}"}
            rows += [
                {"metric": "init_gain", "unit": "ratio", "value": gain, **common},
                {"metric": "init_gain_rse", "unit": "ratio", "value": (2.0 * n) ** -0.5, **common},
            ]
    return rows


def train_case(case, ctx):
    """(TrainResult, rows): the training result for the bench's status rule, and every row of the case."""
    p = case.params
    data = load_pairs(ctx, p)
    model = build_encdec(case, data.vocab)
    built = construction_rows(model)
    result, scores = train_encdec(model, data, train_spec(p), p["device"])
    tail = result.losses[-10:]
    rows = result.rows + built
    rows += [
        {"metric": "unigram_entropy", "unit": "nats", "value": data.unigram_entropy},
        {
            "metric": "data_pairs",
            "unit": "pairs",
            "value": float(data.info["pairs"]),
            "data_sha256": data.info["sha256"],
        },
        {"metric": "final_loss", "unit": "nats", "value": result.final_loss},
        {"metric": "unigram_loss", "unit": "nats", "value": result.unigram_loss},
        {"metric": "final_train_loss", "unit": "nats", "value": sum(tail) / len(tail)},
        {"metric": "train_wall_s", "unit": "s", "value": result.wall_s},
        {"metric": "steps_run", "unit": "steps", "value": float(len(result.losses))},
    ]
    rows += [{"metric": k, "unit": "ratio", "value": v} for k, v in scores.items()]
    return result, rows
