"""The encoder-decoder's part of the one training loop (_lm/training.py `train`, which brings the optimizer,
lr schedule and gradient diagnostics): its batches of pairs, loss and probe, with the model update and the norm
inputs split by side, as DeepNet's Theorem 4.3 splits them, and its held-out loss and accuracies.

Details: docs/methodology.md, "Training stability"."""

from __future__ import annotations

import copy
from functools import partial

import torch

from normbench.benches._lm import site_layer
from normbench.benches._lm.trained import TrainSpec
from normbench.benches._lm.training import kept_inputs, norm_input_rows
from normbench.benches._lm.training import trainable as lm_trainable
from normbench.data.padded import budget_groups
from normbench.data.seq2seq import PAD, pair_batch, unigram_pair_loss
from normbench.models.weight_init import CROSS_RESIDUAL, CROSS_WEIGHTS


def pair_batches(src, tgt, batch: int, seed: int, max_tokens: int = 0):
    """An endless stream of training batches from one seeded generator: `batch` random pairs, or (max_tokens
    > 0) fairseq's token budget over pairs in length order (data/padded.py budget_groups; a pair's size is
    its longer side, as fairseq's num_tokens), the batches shuffled every epoch."""
    gen = torch.Generator().manual_seed(seed)
    if not max_tokens:
        while True:
            yield pair_batch(src, tgt, torch.randint(src.shape[0], (batch,), generator=gen))
    sizes = torch.maximum((src != PAD).sum(1), (tgt != PAD).sum(1))
    while True:
        order = torch.randperm(len(sizes), generator=gen)
        order = order[torch.sort(sizes[order], stable=True).indices]
        groups = budget_groups(order.tolist(), sizes.tolist(), max_tokens)
        for i in torch.randperm(len(groups), generator=gen).tolist():
            yield pair_batch(src, tgt, torch.tensor(groups[i]))


def held_out_batches(data, spec: TrainSpec):
    """The first eval_batches x batch held-out pairs, in order (fewer if the held-out set is smaller)."""
    n = data.held_src.shape[0]
    for i in range(spec.eval_batches):
        index = torch.arange(i * spec.batch, min((i + 1) * spec.batch, n))
        if len(index):
            yield pair_batch(data.held_src, data.held_tgt, index)


def batch_loss(model, b):
    return model(b.src, b.tgt_in, b.tgt, src_pad=b.src_pad, tgt_pad=b.tgt_pad)


def layer_groups(model) -> list[tuple[int, str, list]]:
    """(layer, site, parameters): each stack's embeddings (layer 0) and blocks (1..n); the encoder's final
    norm (N + 1) where there is one; the head with the decoder's final norm (M + 1)."""

    def params(*modules):
        return [p for m in modules if m is not None for p in m.parameters()]

    n, m = len(model.encoder), len(model.decoder)
    groups = [(0, "enc_embed", params(model.src_emb, model.src_pos, model.enc_emb_norm))]
    groups += [(i, "enc", list(b.parameters())) for i, b in enumerate(model.encoder, start=1)]
    if model.enc_final is not None:
        groups.append((n + 1, "enc_final", params(model.enc_final)))
    groups.append((0, "dec_embed", params(model.tgt_emb, model.tgt_pos, model.dec_emb_norm)))
    groups += [(i, "dec", list(b.parameters())) for i, b in enumerate(model.decoder, start=1)]
    return groups + [(m + 1, "head", params(model.head, model.dec_final))]


def trainable(model, group: str) -> list:
    """As _lm/training.trainable, for both stacks: beta_scaled = every matrix DeepNet's beta scales (v_proj,
    out_proj, fc1, fc2, and the cross-attention's v_proj, out_proj); weights = every block matrix."""
    linears = [
        (n, lin) for stack in (model.encoder, model.decoder) for b in stack for n, lin in b.linears().items()
    ]
    embeddings = [e.weight for e in (model.src_emb, model.src_pos, model.tgt_emb, model.tgt_pos)]
    return lm_trainable(model, group, linears, embeddings, CROSS_RESIDUAL, CROSS_WEIGHTS)


def _site_layer(site: str, n: int, m: int) -> int:
    """'enc.3.attn' -> 3, 'dec.0.embed' -> 0, 'enc.final' -> N + 1, 'dec.final' -> M + 1."""
    side, rest = site.split(".", 1)
    return site_layer(rest, n if side == "enc" else m)


def _token_mean(t, real):
    """Mean over the real tokens of per-token L2 norms: t (B, L, width), real (B, L) bool."""
    return torch.linalg.vector_norm(t, dim=-1)[real].mean()


def _kept_mean(kept, real):
    """A norm's kept inputs: (B, L, width) each, or its real tokens (tokens, width) when it took the pad mask."""
    if kept[0].dim() == 2:
        return torch.linalg.vector_norm(torch.cat(kept), dim=-1).mean()
    return _token_mean(torch.cat(kept), real.repeat(len(kept), 1))


@torch.no_grad()
def probe(model, b):
    """(memory, F_ed, {site: mean input norm over that side's real tokens}) on the probe batch."""
    with kept_inputs(model) as norms:  # an encoder BatchNorm's running statistics restored
        memory = model.encode(b.src, b.src_pad)
        h = model.decode(b.tgt_in, memory, b.src_pad, b.tgt_pad)
        real = {"enc": ~b.src_pad, "dec": ~b.tgt_pad}
        inputs = {m.site: _kept_mean(m.kept, real[m.site[:3]]) for m in norms}
    return memory, h, inputs


class PairSteps:
    """The encoder-decoder's part of the loop (as _lm/training.py TextSteps); the probe keeps theta_0's outputs
    on the probe batch and a frozen copy of theta_0's decoder for dec_update_via_enc."""

    def __init__(self, model, data, spec: TrainSpec, device: str):
        self.model, self.data, self.spec, self.device = model, data, spec, device
        self.groups, self.trainable = layer_groups(model), partial(trainable, model)
        self.n, self.m = len(model.encoder), len(model.decoder)
        self.depth = self.n  # numbers the norm sites of nu_share_rows (batch statistics: the encoder's)

    def start(self) -> list[dict]:
        data, spec = self.data, self.spec
        self.batches = pair_batches(
            data.train_src, data.train_tgt, spec.batch, spec.data_seed, spec.max_tokens
        )
        self.b = next(pair_batches(data.held_src, data.held_tgt, spec.batch, spec.data_seed + 1)).to(
            self.device
        )
        self.initial = copy.deepcopy(self.model).eval()
        self.memory0, self.h0, _ = probe(self.model, self.b)
        return self.probe_rows(0)

    def loss(self, step: int, diagnose: bool):
        return batch_loss(self.model, next(self.batches).to(self.device))

    def end_rows(self) -> list[dict]:
        return []

    def held_out(self) -> dict[str, float]:
        return held_out(self.model, self.data, self.spec, self.device)

    def probe_rows(self, step: int) -> list[dict]:
        model, b = self.model, self.b
        memory, h, inputs = probe(model, b)
        with torch.no_grad():
            via_enc = self.initial.decode(b.tgt_in, memory, b.src_pad, b.tgt_pad)
        src_real, tgt_real = ~b.src_pad, ~b.tgt_pad
        values = {
            "model_update": _token_mean(h - self.h0, tgt_real),
            "enc_update": _token_mean(memory - self.memory0, src_real),
            "dec_update_via_enc": _token_mean(via_enc - self.h0, tgt_real),
        }
        rows = [{"metric": k, "unit": "L2/token", "value": v, "step": step} for k, v in values.items()]
        return rows + norm_input_rows(model, inputs, step, lambda site: _site_layer(site, self.n, self.m))


@torch.no_grad()
def held_out(model, data, spec: TrainSpec, device) -> dict[str, float]:
    """Token-weighted loss, unigram loss and accuracies over the held-out batches, in eval mode."""
    totals = dict.fromkeys(("loss", "unigram", "right", "tokens", "pairs_right", "pairs"), 0.0)
    was_training = model.training
    model.eval()
    try:
        for b in held_out_batches(data, spec):
            b = b.to(device)
            logits = model(b.src, b.tgt_in, src_pad=b.src_pad, tgt_pad=b.tgt_pad)
            real = ~b.tgt_pad
            n = float(real.sum())
            totals["loss"] += n * float(torch.nn.functional.cross_entropy(logits[real], b.tgt[real]))
            totals["unigram"] += n * unigram_pair_loss(data.unigram_logp.to(device), b)
            right = (logits.argmax(-1) == b.tgt) | b.tgt_pad
            totals["right"] += float((right & real).sum())
            totals["tokens"] += n
            totals["pairs_right"] += float(right.all(1).sum())
            totals["pairs"] += float(len(b.src))
    finally:
        model.train(was_training)
    return {
        "loss": totals["loss"] / totals["tokens"],
        "unigram": totals["unigram"] / totals["tokens"],
        "token_accuracy": totals["right"] / totals["tokens"],
        "sequence_accuracy": totals["pairs_right"] / totals["pairs"],
    }
