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
