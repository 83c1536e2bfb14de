"""A small decoder-only transformer whose normalization *placement*, *norm* and *init* are parameters, for
the stability and init benches. One file, nanoGPT style; shapes are B = batch, T = sequence, d = hidden,
H = heads, F = FFN width, V = vocabulary, N = number of layers (blocks).

Placements (each block is an attention sub-layer then an FFN sub-layer, G = the sub-layer):
    post      x <- LN(x + G(x))                       Vaswani et al. 2017; Xiong et al. 2020, Fig. 1(a)
    pre       x <- x + G(LN(x)), final LN before head  Xiong et al. 2020, Fig. 1(b)
    deepnorm  x <- LN(alpha * x + G(x)), alpha = (2N)^(1/4)   DeepNet (Wang et al. 2022) §4.1, decoder-only
    sandwich  x <- x + LN'(G(LN(x))), final LN        CogView (Ding et al. 2021) Sandwich-LN; Peri-LN's form
Inits (every q, k, v, out_proj, fc1, fc2 is Xavier-normal with a gain, biases 0):
    xavier        gain 1 everywhere
    deepnorm      gain beta = (8N)^(-1/4) on v_proj, out_proj, fc1, fc2; q_proj, k_proj keep gain 1
                  (DeepNet Fig. 2a; Transformer-Clinic's re-implementation does exactly this)
    depth_scaled  DeepNet §3 "Post-LN-init": all weights of layer l scaled by 1/k_l, k_l = N + 1 - l
                  (l = 1..N), i.e. W ~ N(0, 1/(k_l^2 d')) with d' the mean of fan-in and fan-out. The paper
                  says "the weights of l-th layer" and gives only W_o as an example, so whether q/k are scaled
                  is ambiguous: depth_scaled scales them too, depth_scaled_keep_qk leaves q/k at gain 1.
qk_init = "zero" sets W^Q = W^K = 0 (uniform causal attention, Xiong et al. 2020 §3.3's assumption).
Embeddings (token and learned position): embed = "n01" draws each N(0, 1), so E||x_0||^2 = 2d (s_0 = 2);
"unit" draws each N(0, 1/2), so E||x_0||^2 = d as Xiong's Lemma 2 assumes. The head is Linear(d, V,
bias=False), Xavier-normal.
Sub-LN (an extra LN before out_proj and fc2, Magneto) would be one more branch in Block.forward.

Every norm comes from the registry (layernorm, rmsnorm, ...) and is wrapped in `Norm`, which can keep its
inputs so a bench can measure ||input|| and the Jacobian at the actual input.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

PLACEMENTS = ("post", "pre", "deepnorm", "sandwich")
INITS = ("xavier", "deepnorm", "depth_scaled", "depth_scaled_keep_qk")
EMBEDS = {"n01": 1.0, "unit": 0.5**0.5}  # std of each of the token and position embeddings
RESIDUAL_WEIGHTS = ("v_proj", "out_proj", "fc1", "fc2")  # the weights DeepNorm's beta touches
ALL_WEIGHTS = ("q_proj", "k_proj") + RESIDUAL_WEIGHTS


def deepnorm_alpha(n_layers: int) -> float:
    """DeepNet Table 1, decoder-only: alpha = (2N)^(1/4), the weight of the residual x in LN(alpha x + G(x))."""
    return (2 * n_layers) ** 0.25


def deepnorm_beta(n_layers: int) -> float:
    """DeepNet Table 1, decoder-only: beta = (8N)^(-1/4), the Xavier gain of v_proj, out_proj, fc1, fc2."""
    return (8 * n_layers) ** -0.25


def depth_scale(layer: int, n_layers: int) -> float:
    """DeepNet §3 Post-LN-init: 1/k_l with k_l = N + 1 - l for layer l = 1..N (the top layer is unscaled)."""
    return 1.0 / (n_layers + 1 - layer)


@dataclass(frozen=True)
class ModelConfig:
    vocab: int
    depth: int = 6  # N
    d: int = 64
    heads: int = 2
    ffn: int = 256
    seq: int = 64
    placement: str = "post"
    norm: str = "layernorm"
    impl: str | None = None  # registry implementation; None = the norm's baseline
    eps: float = 1e-5
    init: str = "xavier"
    qk_init: str = "xavier"  # "zero": W^Q = W^K = 0
    embed: str = "n01"  # key of EMBEDS


class Norm(nn.Module):
    """A registry norm over the last dim. `site` names it in results ("3.attn", "final").
    While `self.kept` is a list, each forward appends its input (detached): that is how benches see the
    actual input of every norm without hooks."""

    def __init__(self, cfg: ModelConfig, site: str):
        super().__init__()
        from normbench.norms import get_norm

        norm = get_norm(cfg.norm)
        impl = cfg.impl or norm.baseline
        # built on the CPU in fp32 like every other module here; DecoderLM.to(device) moves it
        built = norm.build(impl, cfg.d, eps=cfg.eps, dtype=torch.float32, device="cpu")
        if not isinstance(built.module, nn.Module):
            raise ValueError(
                f"{cfg.norm}:{impl} has no nn.Module to put in a model; use an impl that has one"
            )
        self.inner = built.module
        self.site = site
        self.kept: list[torch.Tensor] | None = None

    def forward(self, x):  # (B, T, d) -> (B, T, d)
        if self.kept is not None:
            self.kept.append(x.detach())
        return self.inner(x)


class Attention(nn.Module):
    """Causal multi-head self-attention with separate q, k, v projections (so DeepNorm's beta lands on
    exactly the paper's weights: v_proj and out_proj, not q_proj and k_proj)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.heads = cfg.heads
        self.q_proj = nn.Linear(cfg.d, cfg.d)
        self.k_proj = nn.Linear(cfg.d, cfg.d)
        self.v_proj = nn.Linear(cfg.d, cfg.d)
        self.out_proj = nn.Linear(cfg.d, cfg.d)

    def forward(self, x):  # x: (B, T, d)
        B, T, d = x.shape
        # (B, T, d) -> (B, H, T, d/H) for each of q, k, v
        q, k, v = (
            p(x).view(B, T, self.heads, d // self.heads).transpose(1, 2)
            for p in (self.q_proj, self.k_proj, self.v_proj)
        )
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, d/H)
        return self.out_proj(y.transpose(1, 2).reshape(B, T, d))  # (B, T, d)


class FFN(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.fc1 = nn.Linear(cfg.d, cfg.ffn)  # W^1: (d -> F)
        self.fc2 = nn.Linear(cfg.ffn, cfg.d)  # W^2: (F -> d), the weight Xiong's Theorem 1 bounds

    def forward(self, x):  # (B, T, d) -> (B, T, F) -> (B, T, d)
        return self.fc2(F.relu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig, layer: int):
        super().__init__()
        self.placement = cfg.placement
        self.attn = Attention(cfg)
        self.ffn = FFN(cfg)
        # ln_attn / ln_ffn: the norm of each sub-layer (after the sum for post/deepnorm, on the branch
        # input for pre/sandwich); sandwich adds a norm on each branch output.
        self.ln_attn = Norm(cfg, f"{layer}.attn")
        self.ln_ffn = Norm(cfg, f"{layer}.ffn")
        if cfg.placement == "sandwich":
            self.ln_attn_out = Norm(cfg, f"{layer}.attn_out")
            self.ln_ffn_out = Norm(cfg, f"{layer}.ffn_out")
        # DeepNorm's alpha; 1 for Post-LN, where the same equation is x <- LN(x + G(x))
        self.alpha = deepnorm_alpha(cfg.depth) if cfg.placement == "deepnorm" else 1.0

    def forward(self, x):  # (B, T, d) -> (B, T, d)
        if self.placement in ("post", "deepnorm"):
            x = self.ln_attn(
                self.alpha * x + self.attn(x)
            )  # x_{l+1} = LN(alpha x_l + G(x_l)), DeepNet eq. §4.1
            return self.ln_ffn(self.alpha * x + self.ffn(x))
        if self.placement == "pre":
            x = x + self.attn(self.ln_attn(x))  # x_{l+1} = x_l + G(LN(x_l)), Xiong eq. (Pre-LN)
            return x + self.ffn(self.ln_ffn(x))
        x = x + self.ln_attn_out(self.attn(self.ln_attn(x)))  # sandwich: x + LN'(G(LN(x)))
        return x + self.ln_ffn_out(self.ffn(self.ln_ffn(x)))


class DecoderLM(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        if cfg.placement not in PLACEMENTS:
            raise ValueError(f"placement {cfg.placement!r} is not one of {', '.join(PLACEMENTS)}")
        if cfg.d % cfg.heads:
            raise ValueError(f"heads={cfg.heads} does not divide d={cfg.d}")
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab, cfg.d)
        self.pos_emb = nn.Embedding(cfg.seq, cfg.d)  # learned positions
        self.blocks = nn.ModuleList(Block(cfg, layer) for layer in range(1, cfg.depth + 1))
        # Pre-LN and sandwich end with a final norm (Xiong: "the Pre-LN model has a final LN before the
        # softmax"); Post-LN and DeepNorm already end on the last block's LN.
        self.final_norm = Norm(cfg, "final") if cfg.placement in ("pre", "sandwich") else None
        self.head = nn.Linear(cfg.d, cfg.vocab, bias=False)
        init_weights(self, cfg.init, qk_zero=cfg.qk_init == "zero", embed_std=EMBEDS[cfg.embed])

    def hidden(self, idx, stream: list | None = None):
        """idx (B, T) token ids -> (B, T, d): the input of the head, F(x, theta) in DeepNet's model update.
        stream: if a list, receives the residual stream x_0 (embeddings), x_1, ..., x_N (block outputs)."""
        B, T = idx.shape
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(T, device=idx.device))  # x_0: (B, T, d)
        keep = stream.append if stream is not None else (lambda t: None)
        keep(x.detach())
        for block in self.blocks:
            x = block(x)  # x_l, l = 1..N
            keep(x.detach())
        return self.final_norm(x) if self.final_norm is not None else x

    def forward(self, idx, targets=None, stream: list | None = None):
        logits = self.head(self.hidden(idx, stream))  # (B, T, V)
        if targets is None:
            return logits
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))  # nats per token

    def norms(self) -> list[Norm]:
        """Every norm in forward order; the last one feeds the head."""
        return [m for m in self.modules() if isinstance(m, Norm)]

    def last_norm(self) -> Norm:
        return self.final_norm if self.final_norm is not None else self.blocks[-1].ln_ffn


def weight_gains(init: str, layer: int, n_layers: int) -> dict[str, float]:
    """The Xavier-normal gain of each weight of layer l (1-based) under an init scheme."""
    if init == "xavier":
        return dict.fromkeys(ALL_WEIGHTS, 1.0)
    if init == "deepnorm":
        beta = deepnorm_beta(n_layers)
        return {name: (beta if name in RESIDUAL_WEIGHTS else 1.0) for name in ALL_WEIGHTS}
    if init == "depth_scaled":
        return dict.fromkeys(ALL_WEIGHTS, depth_scale(layer, n_layers))
    if init == "depth_scaled_keep_qk":
        return {
            name: depth_scale(layer, n_layers) if name in RESIDUAL_WEIGHTS else 1.0 for name in ALL_WEIGHTS
        }
    raise ValueError(f"init {init!r} is not one of {', '.join(INITS)}")


@torch.no_grad()
def init_weights(model: DecoderLM, init: str, *, qk_zero: bool = False, embed_std: float = 1.0) -> None:
    """Deterministic given torch's global seed: modules are initialised in a fixed order (q/k are drawn
    even when zeroed, so the other weights are the same draws with and without qk_zero)."""
    nn.init.normal_(model.tok_emb.weight, 0.0, embed_std)
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
