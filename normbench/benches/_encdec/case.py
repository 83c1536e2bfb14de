"""One encoder-decoder case: its pairs (generated once per run), the seeded model, the training run (the one
loop, _lm/training.py, with this model's PairSteps), and its rows. The status is judged as the LM's
(_lm/trained.py status_of)."""

from __future__ import annotations

import torch

from normbench.benches._encdec.params import layers, pairs_identity
from normbench.benches._encdec.training import PairSteps
from normbench.benches._lm import model_settings
from normbench.benches._lm.trained import final_rows, train_spec
from normbench.benches._lm.training import train
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
    settings = model_settings(case)
    n, m = layers(p)
    cfg = EncDecConfig(
        vocab=vocab,
        enc_depth=n,
        dec_depth=m,
        max_len=p["max_len"] + 1,  # the target's EOS
        # batch statistics in the encoder only; the causal decoder keeps LayerNorm (models/encdec.py)
        dec_norm="layernorm" if get_norm(case.norm).mixes_tokens else "",
        **settings,
    )
    return EncoderDecoder(cfg).to(p["device"])


@torch.no_grad()
def construction_rows(model) -> list[dict]:
    # the α each stack's blocks use (what the forward reads), not the model's attribute it was built from:
    # the mean over the blocks, and the spread, which is 0 when every block has the one α
    rows = []
    for side, stack in (("enc", model.encoder), ("dec", model.decoder)):
        alphas = [float(b.alpha) for b in stack]
        common = {"unit": "ratio", "step": 0, "site": side}
        rows += [
            {"metric": "residual_alpha", "value": sum(alphas) / len(alphas), **common},
            {"metric": "residual_alpha_spread", "value": max(alphas) - min(alphas), **common},
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
    result = train(model, data, train_spec(p, seq=p["max_len"]), p["device"], steps=PairSteps)
    rows = result.rows + built
    rows += [
        {"metric": "unigram_entropy", "unit": "nats", "value": data.unigram_entropy},
        {
            "metric": "data_pairs",
            "unit": "pairs",
            "value": float(data.info["pairs"]),
            "data_sha256": data.info["sha256"],
        },
    ]
    rows += final_rows(result)
    rows += [{"metric": k, "unit": "ratio", "value": v} for k, v in result.scores.items()]
    return result, rows
