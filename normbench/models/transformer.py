"""A small transformer whose normalization *placement*, *norm*, *init* and *objective* are parameters, for
the stability and init benches. nanoGPT style; shapes are B = batch, T = sequence, d = width, H = heads,
F = FFN width, V = vocabulary, N = number of layers (blocks).

Placements (each block is an attention sub-layer then an FFN sub-layer, G = the sub-layer):
    post      x <- LN(x + G(x))                       Vaswani et al. 2017; Xiong et al. 2020, Fig. 1(a)
    pre       x <- x + G(LN(x)), final LN before head  Xiong et al. 2020, Fig. 1(b)
    deepnorm  x <- LN(alpha * x + G(x)), alpha = (2N)^(1/4)   DeepNet (Wang et al. 2022) §4.1, decoder-only
    sandwich  x <- x + LN'(G(LN(x))), final LN        CogView (Ding et al. 2021) Sandwich-LN
    subln     x <- x + G'(LN(x)), final LN, where G' has one more LN inside: attention
              W^O LN(Attn(..)) and FFN W^2 LN(relu(W^1 .)), the latter over the FFN width F
              Magneto / Sub-LN (Wang et al. 2023, "Foundation Transformers" §3.1)
    periln    x <- x + LN'(G(LN(x))) as sandwich, PLUS an LN on the embedding output x_0 = LN(E[idx] + P),
              final LN                               Peri-LN (Kim et al. 2025, arXiv:2502.02732)
    Peri-LN vs sandwich, and the sources behind periln: docs/methodology.md, "Training stability".
Sub-LN's gamma = sqrt(log 2N) up-scaling of v_proj, out_proj, fc1, fc2 is the init "magneto", not part of
the placement: as with DeepNorm (placement deepnorm, init deepnorm), the architecture and the init are two
axes, so a suite can separate what the extra LN does from what the up-scaling does.
Inits (every q, k, v, out_proj, fc1, fc2 is Xavier-normal with a gain, biases 0; models/weight_init.py):
    xavier        gain 1 everywhere
    deepnorm      gain beta = (8N)^(-1/4) on v_proj, out_proj, fc1, fc2; q_proj, k_proj keep gain 1
                  (DeepNet Fig. 2a; Transformer-Clinic's re-implementation does exactly this)
    depth_scaled  DeepNet §3 "Post-LN-init": all weights of layer l scaled by 1/k_l, k_l = N + 1 - l
                  (l = 1..N), i.e. W ~ N(0, 1/(k_l^2 d')) with d' the mean of fan-in and fan-out. The paper
                  says "the weights of l-th layer" and gives only W_o as an example, so whether q/k are scaled
                  is ambiguous: depth_scaled scales them too, depth_scaled_keep_qk leaves q/k at gain 1.
    magneto       gain gamma = sqrt(log 2N) on v_proj, out_proj, fc1, fc2 (torchscale multiplies them by
                  gamma after their init: the same as Xavier gain gamma); q_proj, k_proj keep gain 1
qk_init = "zero" sets W^Q = W^K = 0 (uniform causal attention, Xiong et al. 2020 §3.3's assumption).
Embeddings (token and learned position): embed = "n01" draws each N(0, 1), so E||x_0||^2 = 2d (s_0 = 2);
"unit" draws each N(0, 1/2), so E||x_0||^2 = d as Xiong's Lemma 2 assumes. The head is Linear(d, V,
bias=False), Xavier-normal.
Objectives: "causal" = next-token LM with causal attention; "masked" = a bidirectional encoder (no
attention mask) trained on a masked-token loss: the token embedding has V + 1 rows (id V = [MASK]), the
head still predicts the V real tokens, and the loss is over the masked positions only (data/masking.py).
Padded batches (pad = True): one more embedding row, the pad id (V, or V + 1 after [MASK]), zero and never
trained (nn.Embedding padding_idx). The key-padding mask (B, T), True at padded positions, taken from the
input ids (idx == pad id, as fairseq's encoder does) unless given, keeps every query from attending to a
padded key and reaches every norm: BatchNorm and PowerNorm then compute their statistics over the real
tokens only (models/norm.py), as the PowerNorm authors' MaskPowerNorm does with `pad_mask` (their
BatchNorm, batchnorm:official, also counts the padding filled with the real mean).
A padded position never reaches a real one, so its values are inert.

Every norm comes from the registry (layernorm, rmsnorm, dyt, batchnorm, ...) and is wrapped in `NormLayer`
(models/norm.py), which gives it (B*T, width) input where it mixes tokens, and can keep its inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from normbench.models.norm import NormLayer
from normbench.models.weight_init import (
    ALL_WEIGHTS,
    INITS,
    RESIDUAL_WEIGHTS,
    deepnorm_alpha,
    deepnorm_beta,
    depth_scale,
    init_weights,
    magneto_gamma,
    weight_gains,
    xavier_std,
)

__all__ = [
    "ALL_WEIGHTS",
    "INITS",
    "RESIDUAL_WEIGHTS",
    "deepnorm_alpha",
    "deepnorm_beta",
    "depth_scale",
    "magneto_gamma",
    "weight_gains",
    "xavier_std",
]

PLACEMENTS = ("post", "pre", "deepnorm", "sandwich", "subln", "periln")
OBJECTIVES = ("causal", "masked")
EMBEDS = {"n01": 1.0, "unit": 0.5**0.5}  # std of each of the token and position embeddings
FINAL_NORM = ("pre", "sandwich", "subln", "periln")  # Post-LN and DeepNorm already end on the last block's LN
BRANCH_OUT_NORM = ("sandwich", "periln")  # a norm on each sub-layer's output


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
    objective: str = "causal"  # or "masked": bidirectional attention, [MASK] id = vocab
    pad: bool = False  # padded batches: a pad id (pad_id) with its own, zero, embedding row

    @property
    def pad_id(self) -> int | None:
        """The id of padded positions: after the V real tokens and [MASK]; None without padding."""
        return self.vocab + (self.objective == "masked") if self.pad else None

    def norm_at(self, site: str, width: int | None = None) -> NormLayer:
        return NormLayer(self.norm, self.impl, width or self.d, self.eps, site, self.heads)


class Attention(nn.Module):
    """Multi-head attention with separate q, k, v projections (so DeepNorm's beta lands on exactly the
    paper's weights: v_proj and out_proj). Self-attention by default (causal for the causal objective,
    bidirectional for the masked one); cross-attention when `kv` (the encoder's output) is given.
    `key_padding_mask` (B, S), True at padded keys, keeps every query from attending to them. `sub_norm`
    (Sub-LN) normalizes the heads' concatenated output before out_proj."""

    def __init__(self, cfg: ModelConfig, sub_norm: NormLayer | None = None, causal: bool | None = None):
        super().__init__()
        self.heads = cfg.heads
        self.causal = cfg.objective == "causal" if causal is None else causal
        self.q_proj = nn.Linear(cfg.d, cfg.d)
        self.k_proj = nn.Linear(cfg.d, cfg.d)
        self.v_proj = nn.Linear(cfg.d, cfg.d)
        self.out_proj = nn.Linear(cfg.d, cfg.d)
        self.sub_norm = sub_norm

    def forward(self, x, kv=None, key_padding_mask=None):  # x: (B, T, d); kv: (B, S, d), default x
        B, T, d = x.shape
        kv = x if kv is None else kv
        S = kv.shape[1]
        # (B, T, d) -> (B, H, T, d/H) for q; (B, S, d) -> (B, H, S, d/H) for k and v
        q = self.q_proj(x).view(B, T, self.heads, d // self.heads).transpose(1, 2)
        k, v = (
            p(kv).view(B, S, self.heads, d // self.heads).transpose(1, 2) for p in (self.k_proj, self.v_proj)
        )
        if key_padding_mask is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)  # (B, H, T, d/H)
        else:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=self._allowed(key_padding_mask, T))
        y = y.transpose(1, 2).reshape(B, T, d)
        return self.out_proj(self.sub_norm(y) if self.sub_norm is not None else y)  # (B, T, d)

    def _allowed(self, key_padding_mask, T: int):
        """(B, 1, T, S) True where a query may attend: a real key (and, causal, not a later one). A padded
        query row still sees its real keys, so no row is all False (which would give NaN)."""
        allowed = ~key_padding_mask[:, None, None, :]  # (B, 1, 1, S)
        if self.causal:
            S = key_padding_mask.shape[1]
            allowed = allowed & torch.ones(T, S, dtype=torch.bool, device=allowed.device).tril()
        return allowed


class FFN(nn.Module):
    def __init__(self, cfg: ModelConfig, sub_norm: NormLayer | None = None):
        super().__init__()
        self.fc1 = nn.Linear(cfg.d, cfg.ffn)  # W^1: (d -> F)
        self.fc2 = nn.Linear(cfg.ffn, cfg.d)  # W^2: (F -> d), the weight Xiong's Theorem 1 bounds
        self.sub_norm = sub_norm  # Sub-LN: an LN over the F units of the FFN before fc2

    def forward(self, x):  # (B, T, d) -> (B, T, F) -> (B, T, d)
        h = F.relu(self.fc1(x))
        return self.fc2(self.sub_norm(h) if self.sub_norm is not None else h)


class TransformerBlock(nn.Module):
    def __init__(self, cfg: ModelConfig, layer: int):
        super().__init__()
        self.placement = cfg.placement
        subln = cfg.placement == "subln"
        # registration order = forward order (model.norms() relies on it)
        self.ln_attn = cfg.norm_at(f"{layer}.attn")
        self.attn = Attention(cfg, cfg.norm_at(f"{layer}.attn_mid") if subln else None)
        if cfg.placement in BRANCH_OUT_NORM:
            self.ln_attn_out = cfg.norm_at(f"{layer}.attn_out")
        # ln_attn / ln_ffn: the norm of each sub-layer (after the sum for post/deepnorm, on the branch
        # input for the others)
        self.ln_ffn = cfg.norm_at(f"{layer}.ffn")
        self.ffn = FFN(cfg, cfg.norm_at(f"{layer}.ffn_mid", cfg.ffn) if subln else None)
        if cfg.placement in BRANCH_OUT_NORM:
            self.ln_ffn_out = cfg.norm_at(f"{layer}.ffn_out")
        # DeepNorm's alpha; 1 for Post-LN, where the same equation is x <- LN(x + G(x))
        self.alpha = deepnorm_alpha(cfg.depth) if cfg.placement == "deepnorm" else 1.0

    def forward(self, x, key_padding_mask=None):  # (B, T, d) -> (B, T, d); key_padding_mask (B, T)
        x = sublayer(
            self, x, lambda h: self.attn(h, key_padding_mask=key_padding_mask), "attn", key_padding_mask
        )
        return sublayer(self, x, self.ffn, "ffn", key_padding_mask)


def sublayer(block: nn.Module, x, branch, name: str, pad_mask=None):
    """One residual sub-layer G = `branch` of `block` under its placement, with the block's norms
    `ln_<name>` (and `ln_<name>_out` for sandwich / Peri-LN) and `block.alpha`. Shared by every block
    (encoder, decoder, and an encoder-decoder's cross-attention) so each placement is written once.
    `pad_mask` (B, T), True at the padded positions of x, goes to every norm (batch statistics over the
    real tokens only)."""
    ln = getattr(block, f"ln_{name}")

    def norm(layer, h):
        return layer(h) if pad_mask is None else layer(h, pad_mask=pad_mask)

    if block.placement in ("post", "deepnorm"):
        return norm(ln, block.alpha * x + branch(x))  # x_{l+1} = LN(alpha x_l + G(x_l)), DeepNet eq. §4.1
    if block.placement in ("pre", "subln"):  # Sub-LN's extra LNs live inside attn / ffn
        return x + branch(norm(ln, x))  # x_{l+1} = x_l + G(LN(x_l)), Xiong eq. (Pre-LN)
    out = getattr(block, f"ln_{name}_out")
    return x + norm(out, branch(norm(ln, x)))  # sandwich / Peri-LN: x + LN'(G(LN(x)))


class TransformerLM(nn.Module):
    """The LM: a decoder with objective "causal", an encoder with "masked"."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        if cfg.placement not in PLACEMENTS:
            raise ValueError(f"placement {cfg.placement!r} is not one of {', '.join(PLACEMENTS)}")
        if cfg.objective not in OBJECTIVES:
            raise ValueError(f"objective {cfg.objective!r} is not one of {', '.join(OBJECTIVES)}")
        if cfg.d % cfg.heads:
            raise ValueError(f"heads={cfg.heads} does not divide d={cfg.d}")
        self.cfg = cfg
        self.mask_id = cfg.vocab if cfg.objective == "masked" else None
        self.pad_id = cfg.pad_id
        rows = cfg.vocab + (cfg.objective == "masked") + cfg.pad  # + the [MASK] row, + the pad row
        self.tok_emb = nn.Embedding(rows, cfg.d, padding_idx=self.pad_id)
        self.pos_emb = nn.Embedding(cfg.seq, cfg.d)  # learned positions
        self.emb_norm = cfg.norm_at("0.embed") if cfg.placement == "periln" else None
        self.blocks = nn.ModuleList(TransformerBlock(cfg, layer) for layer in range(1, cfg.depth + 1))
        # Pre-LN and the placements built on it end with a final norm (Xiong: "the Pre-LN model has a final
        # LN before the softmax"); Post-LN and DeepNorm already end on the last block's LN.
        self.final_norm = cfg.norm_at("final") if cfg.placement in FINAL_NORM else None
        self.head = nn.Linear(cfg.d, cfg.vocab, bias=False)
        init_weights(self, cfg.init, qk_zero=cfg.qk_init == "zero", embed_std=EMBEDS[cfg.embed])

    def padding_of(self, idx, key_padding_mask=None):
        """The key-padding mask (B, T) to use: the one given, else idx == pad id where padding is on (None
        when nothing is padded, so unpadded batches take exactly the unpadded path)."""
        if key_padding_mask is not None or self.pad_id is None:
            return key_padding_mask
        pad = idx == self.pad_id
        return pad if bool(pad.any()) else None

    def head_input(self, idx, stream: list | None = None, key_padding_mask=None):
        """idx (B, T) token ids -> (B, T, d): the input of the head, F(x, theta) in DeepNet's model update.
        stream: if a list, receives the residual stream x_0 (embeddings, normalized for Peri-LN), x_1, ...,
        x_N (block outputs). key_padding_mask (B, T): True at padded positions (`padding_of`)."""
        B, T = idx.shape
        pad = self.padding_of(idx, key_padding_mask)
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(T, device=idx.device))  # x_0: (B, T, d)
        if self.emb_norm is not None:
            x = self.emb_norm(x) if pad is None else self.emb_norm(x, pad_mask=pad)
        keep = stream.append if stream is not None else (lambda t: None)
        keep(x.detach())
        for block in self.blocks:
            x = block(x) if pad is None else block(x, key_padding_mask=pad)  # x_l, l = 1..N
            keep(x.detach())
        if self.final_norm is None:
            return x
        return self.final_norm(x) if pad is None else self.final_norm(x, pad_mask=pad)

    def forward(self, idx, targets=None, stream: list | None = None, mask=None, key_padding_mask=None):
        """Logits (B, T, V), or with targets the mean cross-entropy in nats: over every position, or over
        the positions where `mask` (B, T) is True (the masked objective's loss; with padding, the real
        targets). key_padding_mask: as in `head_input`."""
        logits = self.head(self.head_input(idx, stream, key_padding_mask))  # (B, T, V)
        if targets is None:
            return logits
        if mask is not None:
            return F.cross_entropy(logits[mask], targets[mask])
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))  # nats per token

    def norms(self) -> list[NormLayer]:
        """Every norm in forward order; the last one feeds the head."""
        return [m for m in self.modules() if isinstance(m, NormLayer)]

    def last_norm(self) -> NormLayer:
        return self.final_norm if self.final_norm is not None else self.blocks[-1].ln_ffn
