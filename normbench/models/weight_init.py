"""The init schemes of the small LM (every q, k, v, out_proj, fc1, fc2 is Xavier-normal with a gain,
biases 0). transformer.py's docstring has the table; this file has the constants and the draws."""

from __future__ import annotations

import math

import torch
from torch import nn

INITS = ("xavier", "deepnorm", "depth_scaled", "depth_scaled_keep_qk", "magneto")
# the weights DeepNorm's beta and Magneto's gamma touch
RESIDUAL_WEIGHTS = ("v_proj", "out_proj", "fc1", "fc2")
ALL_WEIGHTS = ("q_proj", "k_proj") + RESIDUAL_WEIGHTS


def deepnorm_alpha(n_layers: int) -> float:
    """DeepNet Table 1, decoder-only: alpha = (2N)^(1/4), the weight of the residual x in LN(alpha x + G(x))."""
    return (2 * n_layers) ** 0.25


def deepnorm_beta(n_layers: int) -> float:
    """DeepNet Table 1, decoder-only: beta = (8N)^(-1/4), the Xavier gain of v_proj, out_proj, fc1, fc2."""
    return (8 * n_layers) ** -0.25


def magneto_gamma(n_layers: int) -> float:
    """Magneto (Foundation Transformers) gamma = sqrt(log 2N) for an encoder-only or decoder-only stack of N
    layers (torchscale multiplies v_proj, out_proj, fc1, fc2 by it after their init; Wang et al. 2022, DeepNet, Table 1 / torchscale)."""
    return math.sqrt(math.log(2 * n_layers))


def depth_scale(layer: int, n_layers: int) -> float:
    """DeepNet §3 Post-LN-init: 1/k_l with k_l = N + 1 - l for layer l = 1..N (the top layer is unscaled)."""
    return 1.0 / (n_layers + 1 - layer)


def weight_gains(init: str, layer: int, n_layers: int) -> dict[str, float]:
    """The Xavier-normal gain of each weight of layer l (1-based) under an init scheme."""
    if init == "xavier":
        return dict.fromkeys(ALL_WEIGHTS, 1.0)
    if init in ("deepnorm", "magneto"):
        gain = deepnorm_beta(n_layers) if init == "deepnorm" else magneto_gamma(n_layers)
        return {name: (gain if name in RESIDUAL_WEIGHTS else 1.0) for name in ALL_WEIGHTS}
    if init == "depth_scaled":
        return dict.fromkeys(ALL_WEIGHTS, depth_scale(layer, n_layers))
    if init == "depth_scaled_keep_qk":
        return {
            name: depth_scale(layer, n_layers) if name in RESIDUAL_WEIGHTS else 1.0 for name in ALL_WEIGHTS
        }
    raise ValueError(f"init {init!r} is not one of {', '.join(INITS)}")


@torch.no_grad()
def init_weights(model, init: str, *, qk_zero: bool = False, embed_std: float = 1.0) -> None:
    """Deterministic given torch's global seed: modules are initialised in a fixed order (q/k are drawn
    even when zeroed, so the other weights are the same draws with and without qk_zero)."""
    nn.init.normal_(model.tok_emb.weight, 0.0, embed_std)
    if model.tok_emb.padding_idx is not None:  # the pad row: zero, and nn.Embedding never updates it
        model.tok_emb.weight[model.tok_emb.padding_idx].zero_()
    nn.init.normal_(model.pos_emb.weight, 0.0, embed_std)
    n = len(model.blocks)
    for layer, block in enumerate(model.blocks, start=1):
        gains = weight_gains(init, layer, n)
        linears = {
            "q_proj": block.attn.q_proj,
            "k_proj": block.attn.k_proj,
            "v_proj": block.attn.v_proj,
            "out_proj": block.attn.out_proj,
            "fc1": block.ffn.fc1,
            "fc2": block.ffn.fc2,
        }
        for name, linear in linears.items():
            nn.init.xavier_normal_(linear.weight, gain=gains[name])  # N(0, gain^2 * 2 / (fan_in + fan_out))
            nn.init.zeros_(linear.bias)
            if qk_zero and name in ("q_proj", "k_proj"):
                nn.init.zeros_(linear.weight)
    nn.init.xavier_normal_(model.head.weight)


def xavier_std(fan_in: int, fan_out: int, gain: float = 1.0) -> float:
    return gain * math.sqrt(2.0 / (fan_in + fan_out))


# ---- encoder-decoder (models/encdec.py): N encoder layers, M decoder layers ------------------------------
# The decoder's cross-attention matrices, by the name encdec.py gives them (DecoderLayer.cross).
CROSS_WEIGHTS = ("cross.q_proj", "cross.k_proj", "cross.v_proj", "cross.out_proj")
CROSS_RESIDUAL = ("cross.v_proj", "cross.out_proj")


def encdec_deepnorm_alpha(n_enc: int, n_dec: int) -> tuple[float, float]:
    """DeepNet Table 1, encoder-decoder: (alpha_e, alpha_d) = (0.81 (N^4 M)^(1/16), (3M)^(1/4)).
    0.81 ~ 27^(-1/16): from alpha_e^2 = (N^4 M / 27)^(1/8) (DeepNet §4.3, Appendix C)."""
    return 0.81 * (n_enc**4 * n_dec) ** (1 / 16), (3 * n_dec) ** 0.25


def encdec_deepnorm_beta(n_enc: int, n_dec: int) -> tuple[float, float]:
    """DeepNet Table 1, encoder-decoder: (beta_e, beta_d) = (0.87 (N^4 M)^(-1/16), (12M)^(-1/4)), the Xavier
    gains of v_proj, out_proj, fc1, fc2 (and, in the decoder, of the cross-attention's v_proj and out_proj:
    torchscale's decoder divides every parameter named fc1/fc2/out_proj/v_proj, encoder_attn's included).
    0.87 ~ 27^(1/16)/sqrt(2). torchscale's encoder.py divides by (N^4 M)^(1/16)/1.15 instead, a gain of
    1.15 (N^4 M)^(-1/16), 1.32x the table's; normbench follows the table (docs/claims.md)."""
    return 0.87 * (n_enc**4 * n_dec) ** (-1 / 16), (12 * n_dec) ** -0.25


def encdec_magneto_gamma(n_enc: int, n_dec: int) -> tuple[float, float]:
    """Magneto (Foundation Transformers, torchscale encoder.py / decoder.py), encoder-decoder:
    (gamma_e, gamma_d) = (sqrt(log(3M) log(2N) / 3), sqrt(log 3M)); the decoder's cross-attention is not
    scaled (torchscale skips every parameter named encoder_attn)."""
    return math.sqrt(math.log(3 * n_dec) * math.log(2 * n_enc) / 3), math.sqrt(math.log(3 * n_dec))


def encdec_weight_gains(init: str, side: str, layer: int, n_enc: int, n_dec: int) -> dict[str, float]:
    """The Xavier-normal gain of each matrix of layer l (1-based) of the encoder ("enc": ALL_WEIGHTS) or the
    decoder ("dec": ALL_WEIGHTS and CROSS_WEIGHTS). depth_scaled counts k_l = n + 1 - l within each stack
    (DeepNet §3 scales "the l-th layer" of the 18L-18L model; each stack has its own l = 1..n)."""
    names = ALL_WEIGHTS + (CROSS_WEIGHTS if side == "dec" else ())
    n = n_enc if side == "enc" else n_dec
    qk = ("q_proj", "k_proj", "cross.q_proj", "cross.k_proj")
    if init == "deepnorm":
        beta = encdec_deepnorm_beta(n_enc, n_dec)[side == "dec"]
        scaled = RESIDUAL_WEIGHTS + CROSS_RESIDUAL
        return {name: beta if name in scaled else 1.0 for name in names}
    if init == "magneto":
        gamma = encdec_magneto_gamma(n_enc, n_dec)[side == "dec"]
        return {name: gamma if name in RESIDUAL_WEIGHTS else 1.0 for name in names}
    if init in ("xavier", "depth_scaled", "depth_scaled_keep_qk"):
        scale = 1.0 if init == "xavier" else depth_scale(layer, n)
        return {name: 1.0 if init == "depth_scaled_keep_qk" and name in qk else scale for name in names}
    raise ValueError(f"init {init!r} is not one of {', '.join(INITS)}")


@torch.no_grad()
def init_encdec_weights(model, init: str, *, qk_zero: bool = False, embed_std: float = 1.0) -> None:
    """As init_weights, for an encdec.EncoderDecoder: embeddings N(0, embed_std^2), every block matrix
    Xavier-normal with its gain (encdec_weight_gains), biases 0, the head Xavier-normal; drawn in a fixed
    order (source then target embeddings, encoder layers, decoder layers, head). qk_zero zeroes the self-
    and cross-attention W^Q, W^K after drawing them."""
    for emb in (model.src_emb, model.src_pos, model.tgt_emb, model.tgt_pos):
        nn.init.normal_(emb.weight, 0.0, embed_std)
    n_enc, n_dec = len(model.encoder), len(model.decoder)
    for side, stack in (("enc", model.encoder), ("dec", model.decoder)):
        for layer, block in enumerate(stack, start=1):
            gains = encdec_weight_gains(init, side, layer, n_enc, n_dec)
            for name, linear in block.linears().items():
                nn.init.xavier_normal_(
                    linear.weight, gain=gains[name]
                )  # N(0, gain^2 * 2 / (fan_in + fan_out))
                nn.init.zeros_(linear.bias)
                if qk_zero and name.endswith(("q_proj", "k_proj")):
                    nn.init.zeros_(linear.weight)
    nn.init.xavier_normal_(model.head.weight)
