"""What the stability and init benches share: the model and data parameters, their cross-parameter
rules, and building a seeded model and its data for one case. Torch-free at import."""

from __future__ import annotations

import json

from normbench.benches._tensors import check_device
from normbench.benches.base import Bench
from normbench.core.params import Param
from normbench.data import data_identity, load_data
from normbench.data.corpus import corpus_problem
from normbench.data.tokens import check_windows_fit
from normbench.norms import get_norm

# Kept here, not imported from normbench.models (which imports torch): tests check they match.
PLACEMENTS = ("post", "pre", "deepnorm", "sandwich", "subln", "periln")
INITS = ("xavier", "deepnorm", "depth_scaled", "depth_scaled_keep_qk", "magneto")
OBJECTIVES = ("causal", "masked")
EMBEDS = ("n01", "unit")
DATA = ("text", "code", "stdlib", "mix", "markov")
KEY_ORDER = ["placement", "init", "warmup", "lr", "schedule"]  # how tables order the swept keys; depth last


def _open_unit_interval(value: float) -> str | None:
    return None if 0.0 < value < 1.0 else f"{value!r} must be in (0, 1)"


MODEL_PARAMS = {
    "placement": Param(
        str,
        "post",
        choices=PLACEMENTS,
        help="where the norm sits in each block (subln: Magneto; periln: norm in+out of each sub-layer)",
    ),
    "objective": Param(
        str,
        "causal",
        choices=OBJECTIVES,
        help="causal = next-token LM; masked = bidirectional encoder, loss on masked tokens (BERT 80/10/10)",
    ),
    "mask_prob": Param(
        float, 0.15, check=_open_unit_interval, help="masked objective: fraction of positions chosen"
    ),
    "init": Param(
        str,
        "xavier",
        choices=INITS,
        help="xavier; deepnorm = beta gains; depth_scaled = 1/k_l (Post-LN-init) on every weight, "
        "depth_scaled_keep_qk = 1/k_l except q/k; magneto = sqrt(log 2N) on v/out/fc1/fc2 (Sub-LN)",
    ),
    "qk_init": Param(str, "xavier", choices=("xavier", "zero"), help="zero: W^Q = W^K = 0 (Xiong's Lemma 2)"),
    "embed": Param(
        str, "n01", choices=EMBEDS, help="n01: token, position each N(0,1) (E||x0||^2 = 2d); unit: = d"
    ),
    "depth": Param(int, 6, minimum=1, help="number of layers N (each: attention + FFN)"),
    "d": Param(int, 64, minimum=2, help="model width (the residual stream's size)"),
    "heads": Param(int, 2, minimum=1, help="attention heads (must divide d)"),
    "ffn": Param(int, 256, minimum=1, help="FFN width"),
    "seq": Param(int, 64, minimum=2, help="sequence length"),
    "batch": Param(int, 16, minimum=1, help="sequences per batch"),
    "eps": Param(float, 1e-5, exclusive_minimum=0.0, help="the norm's epsilon"),
    "seed": Param(int, 0, help="seeds the model's initialization"),
    "data": Param(
        str,
        "text",
        choices=DATA,
        help="text = generated prose, the same bytes everywhere (or corpus_dir's files); code = generated "
        "Python-like source, the same bytes everywhere; stdlib = this Python's stdlib source (not portable); mix = generated prose, stdlib code and the Python manual's "
        "prose in about equal shares (not portable); markov = seeded chain",
    ),
    "data_seed": Param(
        int, 1234, help="seeds the batch windows (and the Markov chain): the same for every model seed"
    ),
    "corpus_dir": Param(
        str, "", help="your own text for data=text: every file of this directory (stdlib: its *.py files)"
    ),
    "device": Param(str, "cpu", choices=("cpu", "cuda")),
}


class LMBench(Bench):
    """Base of the bench kinds that build the small LM: the cross-parameter rules and the seeded setup."""

    all_impls_by_default = False  # a suite naming a norm gets its baseline (nn.Module) implementation
    # layer/site: per-layer rows (_lm/training.py, init.py); data_files/data_sha256: the corpus row.
    labels = {"layer": int, "site": str, "data_files": int, "data_sha256": str}
    key_order = KEY_ORDER  # how tables order the swept keys (analysis reads it through the registry)

    def check_case(self, params, norm, impl):
        problems = check_model_case(params, norm)
        if (problem := corpus_problem(params["data"], params["corpus_dir"])) is not None:
            problems.append(("corpus_dir", problem))
        return problems

    def identity(self, params):
        return {
            "data": data_identity(params["data"], seed=params["data_seed"], corpus_dir=params["corpus_dir"])
        }

    @staticmethod
    def model_and_data(case, ctx):
        data = load_case_data(ctx, case.params)
        check_windows_fit(data, case.params["seq"])  # before the model is built or trained
        return build_model(case, data.vocab), data


def check_model_case(params, norm) -> list[tuple[str, str]]:
    problems = []
    if params["corpus_dir"] and params["data"] not in ("text", "stdlib"):
        problems.append(("corpus_dir", f"corpus_dir is for data = text or stdlib, not {params['data']}"))
    if params["d"] % params["heads"]:
        problems.append(("heads", f"{params['heads']} heads do not divide d={params['d']}"))
    if norm is not None and params["objective"] == "causal" and norm_mixes_tokens(norm):
        problems.append(
            (
                "norms",
                f"{norm} normalizes over the batch: its statistics over batch x time let every position see "
                'the tokens after it, which a causal LM must not; use objective = "masked" (a '
                "bidirectional encoder) or a per-token norm (layernorm, rmsnorm, dyt)",
            )
        )
    return problems


def norm_mixes_tokens(norm: str) -> bool:
    """The registry's `mixes_tokens` (statistics across tokens: BatchNorm, PowerNorm); False if unknown."""
    try:
        return get_norm(norm).mixes_tokens
    except (KeyError, ValueError):  # an unknown norm is reported at the norms key by the suite loader
        return False


def load_case_data(ctx, p):
    """The case's TokenData, loaded once per run (the corpus is 4-5 MB; the chain takes a second)."""
    key = ("data", p["data"], p["data_seed"] if p["data"] == "markov" else None, p["corpus_dir"])
    if key not in ctx.memo:
        ctx.memo[key] = load_data(p["data"], seed=p["data_seed"], corpus_dir=p["corpus_dir"])
    return ctx.memo[key]


def model_settings(case) -> dict:
    """What every model family's config reads from a case alike (the LM's ModelConfig, the encoder-decoder's
    EncDecConfig), after seeding torch's global generator with the case's `seed` on its checked device."""
    import torch

    p = case.params
    check_device(p["device"])
    torch.manual_seed(p["seed"])
    shared = ("d", "heads", "ffn", "placement", "eps", "init", "qk_init", "embed")
    return {"norm": case.norm, "impl": case.impl, **{k: p[k] for k in shared}}


def build_model(case, vocab: int):
    """The seeded model for a case: torch's global generator is seeded with `seed` right before."""
    from normbench.models import ModelConfig, TransformerLM

    p = case.params
    settings = model_settings(case)
    pad = p.get("batching", "windows") != "windows"
    cfg = ModelConfig(
        vocab=vocab, depth=p["depth"], seq=p["seq"], objective=p["objective"], pad=pad, **settings
    )
    return TransformerLM(cfg).to(p["device"])


def site_layer(site: str, n_layers: int) -> int:
    """A norm site's layer: '3.attn' -> 3; '0.embed' -> 0; 'final' -> N + 1."""
    return n_layers + 1 if site == "final" else int(site.split(".")[0])


def data_rows(data) -> list[dict]:
    """The data's reference losses as rows (unigram entropy, and the optimum when it is known)."""
    rows = [{"metric": "unigram_entropy", "unit": "nats", "value": data.unigram_entropy}]
    if "sha256" in data.info:  # a byte corpus, identified by its hash and part (file/paragraph) count
        rows.append(
            {
                "metric": "data_bytes",
                "unit": "B",
                "value": float(data.info["bytes"]),
                "data_files": data.info["files"],
                "data_sha256": data.info["sha256"],
            }
        )
        rows.append(
            {"metric": "held_out_unigram_xent", "unit": "nats", "value": data.info["held_out_unigram_xent"]}
        )
    if data.optimal_loss is not None:
        rows.append({"metric": "optimal_loss", "unit": "nats", "value": data.optimal_loss})
    return rows


def varying_keys(frame, exclude=("seed",)) -> list[str]:
    """The case parameters that differ between the cases of `frame` (what a table should group by)."""
    params = [json.loads(s) for s in frame.drop_duplicates("case_id")["params"]]
    keys = [k for k in params[0] if k not in exclude and len({json.dumps(q.get(k)) for q in params}) > 1]
    keys.sort(key=lambda k: (k == "depth", KEY_ORDER.index(k) if k in KEY_ORDER else len(KEY_ORDER)))
    return ["norm"] * (frame["norm"].nunique() > 1) + keys
