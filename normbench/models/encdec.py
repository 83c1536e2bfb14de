"""An encoder-decoder Transformer (Vaswani et al. 2017) built from the decoder-only model's parts
(transformer.py: Attention, FFN, NormLayer, `sublayer`), for DeepNet's encoder-decoder constants and its
Theorem 4.3 (the decoder is the less stable side). Shapes: B = batch, S = source length, T = target
length, d = width, H = heads, F = FFN width, V = vocabulary, N = encoder layers, M = decoder layers.

    encoder layer l = 1..N    x <- sub(x, SelfAttn(., key padding of the source))      bidirectional
                              x <- sub(x, FFN)
    decoder layer l = 1..M    y <- sub(y, SelfAttn(., causal))
                              y <- sub(y, CrossAttn(., memory = encoder output, key padding of the source))
                              y <- sub(y, FFN)

`sub` is the placement's residual sub-layer, the one transformer.sublayer writes for every model: post
x <- LN(x + G(x)); pre x <- x + G(LN(x)); deepnorm x <- LN(alpha x + G(x)); sandwich / periln
x <- x + LN'(G(LN(x))); subln x <- x + G'(LN(x)) with an LN inside G' (the cross-attention's too, as in
torchscale's decoder, which builds encoder_attn with subln). Pre-LN and the placements built on it end each
stack with a final LN (the encoder's output, the memory every cross-attention reads, is normalized; fairseq
and torchscale do the same); Peri-LN also normalizes each stack's embedding output.

DeepNorm in an encoder-decoder (DeepNet Table 1, §4.3): the encoder's sub-layers use alpha_e =
0.81 (N^4 M)^(1/16) and the decoder's (self, cross and FFN alike) alpha_d = (3M)^(1/4); the init
(weight_init.encdec_weight_gains) gives v_proj, out_proj, fc1, fc2 the gain beta_e = 0.87 (N^4 M)^(-1/16) in
the encoder and beta_d = (12M)^(-1/4) in the decoder, the cross-attention's v_proj and out_proj included;
q_proj and k_proj keep gain 1 (DeepNet Fig. 2a / Alg. 1). The other inits are the decoder-only model's,
per stack (depth_scaled: k_l = n + 1 - l within each stack; magneto: torchscale's enc-dec gammas, cross-
attention unscaled).

Tokens: one id space for both sides, PAD = 0 (data/seq2seq.py); separate source and target embeddings, each
with learned positions. Padding: `src_pad` (B, S) and `tgt_pad` (B, T) are True at padded positions; no query
attends to a padded key, and the loss counts real target tokens only, so padding never changes the loss of
the real tokens (tests/test_encdec_model.py). A norm with batch statistics (BatchNorm, PowerNorm) goes in
the encoder only, with its statistics over the real source tokens (`src_pad` reaches every encoder norm); the
decoder keeps `dec_norm` (LayerNorm: a causal decoder's batch statistics would see later tokens), as the
PowerNorm authors ran IWSLT14 (train-iwslt14.sh "power power layer layer", sIncerass/powernorm)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from normbench.models.norm import NormLayer
from normbench.models.transformer import (
    BRANCH_OUT_NORM,
    EMBEDS,
    FFN,
    FINAL_NORM,
    PLACEMENTS,
    Attention,
    ModelConfig,
    sublayer,
)
from normbench.models.weight_init import encdec_deepnorm_alpha, init_encdec_weights


@dataclass(frozen=True)
class EncDecConfig:
    vocab: int  # token ids of both sides, PAD/BOS/EOS included
    enc_depth: int = 6  # N
    dec_depth: int = 6  # M
    d: int = 64
    heads: int = 2
    ffn: int = 256
    max_len: int = 64  # positions of each side (a target is its source's length + 1)
    placement: str = "post"
    norm: str = "layernorm"
    impl: str | None = None
    eps: float = 1e-5
    init: str = "xavier"
    qk_init: str = "xavier"  # "zero": every W^Q = W^K = 0 (uniform attention)
    embed: str = "n01"  # key of transformer.EMBEDS
    dec_norm: str = ""  # the decoder's norm ("" = norm) and its implementation
    dec_impl: str | None = None

    def blocks(self, side: str = "enc") -> ModelConfig:
        """What the shared parts (Attention, FFN, norm_at) read: width, heads, FFN, the side's norm.
        Attention's causal flag is always passed explicitly here, so the objective field does not matter."""
        dec = side == "dec" and self.dec_norm
        return ModelConfig(
            vocab=self.vocab,
            depth=max(self.enc_depth, self.dec_depth),
            d=self.d,
            heads=self.heads,
            ffn=self.ffn,
            placement=self.placement,
            norm=self.dec_norm if dec else self.norm,
            impl=self.dec_impl if dec else self.impl,
            eps=self.eps,
        )


def _add_sublayer(layer: nn.Module, cfg: ModelConfig, site: str, name: str, branch, width=None) -> None:
    """layer.ln_<name>, layer.<name> = branch(Sub-LN's norm inside it, or None) and, where the placement has
    one, layer.ln_<name>_out: registered in forward order (model.norms() and the init's draws rely on it)."""
    setattr(layer, f"ln_{name}", cfg.norm_at(f"{site}.{name}"))
    inner = cfg.norm_at(f"{site}.{name}_mid", width) if cfg.placement == "subln" else None
    setattr(layer, name, branch(inner))
    if cfg.placement in BRANCH_OUT_NORM:
        setattr(layer, f"ln_{name}_out", cfg.norm_at(f"{site}.{name}_out"))


class EncoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig, layer: int, alpha: float):
        super().__init__()
        self.placement, self.alpha = cfg.placement, alpha
        site = f"enc.{layer}"
        _add_sublayer(self, cfg, site, "attn", lambda inner: Attention(cfg, inner, causal=False))
        _add_sublayer(self, cfg, site, "ffn", lambda inner: FFN(cfg, inner), cfg.ffn)

    def forward(self, x, src_pad):  # (B, S, d) -> (B, S, d)
        pad = src_pad if self.ln_attn.flatten else None  # batch statistics over real source tokens only
        x = sublayer(self, x, lambda h: self.attn(h, key_padding_mask=src_pad), "attn", pad)
        return sublayer(self, x, self.ffn, "ffn", pad)

    def linears(self) -> dict[str, nn.Linear]:
        a, f = self.attn, self.ffn  # the draw order of the init: the decoder-only model's
        return {
            "q_proj": a.q_proj,
            "k_proj": a.k_proj,
            "v_proj": a.v_proj,
            "out_proj": a.out_proj,
            "fc1": f.fc1,
            "fc2": f.fc2,
        }


class DecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig, layer: int, alpha: float):
        super().__init__()
        self.placement, self.alpha = cfg.placement, alpha  # alpha_d on all three sub-layers (torchscale)
        site = f"dec.{layer}"
        _add_sublayer(self, cfg, site, "attn", lambda inner: Attention(cfg, inner, causal=True))
        _add_sublayer(self, cfg, site, "cross", lambda inner: Attention(cfg, inner, causal=False))
        _add_sublayer(self, cfg, site, "ffn", lambda inner: FFN(cfg, inner), cfg.ffn)

    def forward(self, y, memory, src_pad, tgt_pad):  # y (B, T, d), memory (B, S, d) -> (B, T, d)
        y = sublayer(self, y, lambda h: self.attn(h, key_padding_mask=tgt_pad), "attn")
        # every query (B, T) reads the encoder's output; the source's padded positions are no key
        y = sublayer(self, y, lambda h: self.cross(h, kv=memory, key_padding_mask=src_pad), "cross")
        return sublayer(self, y, self.ffn, "ffn")

    def linears(self) -> dict[str, nn.Linear]:
        a, c, f = self.attn, self.cross, self.ffn
        out = {"q_proj": a.q_proj, "k_proj": a.k_proj, "v_proj": a.v_proj, "out_proj": a.out_proj}
        out |= {"cross.q_proj": c.q_proj, "cross.k_proj": c.k_proj, "cross.v_proj": c.v_proj}
        return out | {"cross.out_proj": c.out_proj, "fc1": f.fc1, "fc2": f.fc2}


class EncoderDecoder(nn.Module):
    def __init__(self, cfg: EncDecConfig):
        super().__init__()
        if cfg.placement not in PLACEMENTS:
            raise ValueError(f"placement {cfg.placement!r} is not one of {', '.join(PLACEMENTS)}")
        if cfg.d % cfg.heads:
            raise ValueError(f"heads={cfg.heads} does not divide d={cfg.d}")
        self.cfg = cfg
        b, bd = cfg.blocks("enc"), cfg.blocks("dec")
        deep = cfg.placement == "deepnorm"
        self.alpha_enc, self.alpha_dec = (
            encdec_deepnorm_alpha(cfg.enc_depth, cfg.dec_depth) if deep else (1.0, 1.0)
        )
        periln, final = cfg.placement == "periln", cfg.placement in FINAL_NORM
        self.src_emb = nn.Embedding(cfg.vocab, cfg.d)
        self.src_pos = nn.Embedding(cfg.max_len, cfg.d)  # learned positions
        self.enc_emb_norm = b.norm_at("enc.0.embed") if periln else None
        self.encoder = nn.ModuleList(EncoderLayer(b, i, self.alpha_enc) for i in range(1, cfg.enc_depth + 1))
        self.enc_final = b.norm_at("enc.final") if final else None
        self.tgt_emb = nn.Embedding(cfg.vocab, cfg.d)
        self.tgt_pos = nn.Embedding(cfg.max_len, cfg.d)
        self.dec_emb_norm = bd.norm_at("dec.0.embed") if periln else None
        self.decoder = nn.ModuleList(DecoderLayer(bd, i, self.alpha_dec) for i in range(1, cfg.dec_depth + 1))
        self.dec_final = bd.norm_at("dec.final") if final else None
        self.head = nn.Linear(cfg.d, cfg.vocab, bias=False)
        init_encdec_weights(self, cfg.init, qk_zero=cfg.qk_init == "zero", embed_std=EMBEDS[cfg.embed])

    def encode(self, src, src_pad):
        """src (B, S) ids, src_pad (B, S) -> memory (B, S, d): F_e(x, theta_e), what every cross-attention
        reads (DeepNet Thm 4.3's encoder update is ||F_e(theta*) - F_e(theta)||)."""
        x = self.src_emb(src) + self.src_pos(torch.arange(src.shape[1], device=src.device))  # (B, S, d)
        pad = (
            {"pad_mask": src_pad} if self.encoder[0].ln_attn.flatten else {}
        )  # batch statistics: real tokens
        if self.enc_emb_norm is not None:
            x = self.enc_emb_norm(x, **pad)
        for layer in self.encoder:
            x = layer(x, src_pad)
        return self.enc_final(x, **pad) if self.enc_final is not None else x

    def decode(self, tgt_in, memory, src_pad, tgt_pad):
        """tgt_in (B, T) ids (BOS then the target shifted right: teacher forcing) -> (B, T, d), the head's
        input F_ed(x, y, theta): DeepNet's model update of the whole encoder-decoder."""
        y = self.tgt_emb(tgt_in) + self.tgt_pos(torch.arange(tgt_in.shape[1], device=tgt_in.device))
        if self.dec_emb_norm is not None:
            y = self.dec_emb_norm(y)
        for layer in self.decoder:
            y = layer(y, memory, src_pad, tgt_pad)
        return self.dec_final(y) if self.dec_final is not None else y

    def forward(self, src, tgt_in, targets=None, src_pad=None, tgt_pad=None):
        """Logits (B, T, V); with targets (B, T), the mean cross-entropy (nats) over the real target tokens
        (those where tgt_pad is False; every token when tgt_pad is None)."""
        logits = self.head(self.decode(tgt_in, self.encode(src, src_pad), src_pad, tgt_pad))  # (B, T, V)
        if targets is None:
            return logits
        if tgt_pad is None:
            return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        real = ~tgt_pad
        return F.cross_entropy(logits[real], targets[real])

    def norms(self) -> list[NormLayer]:
        """Every norm in forward order (encoder, then decoder); the last one feeds the head."""
        return [m for m in self.modules() if isinstance(m, NormLayer)]

    def last_norm(self) -> NormLayer:
        return self.dec_final if self.dec_final is not None else self.decoder[-1].ln_ffn
