"""Masked-token batches for the masked (bidirectional) objective, BERT style (Devlin et al. 2019 §3.1).

Each position is chosen with probability mask_prob (at least one per batch, so the loss is defined); a
chosen position's input becomes [MASK] (id V) with probability 0.8, a uniformly random real token (0..V-1)
with 0.1, and stays unchanged with 0.1 (the 80/10/10 rule); the target is the original token, and the loss
counts the chosen positions only. The choices come from a generator the caller seeds apart from the model
(and from the window sampler), so they are reproducible and the same for every model seed."""

from __future__ import annotations

from normbench.data.padded import pad_units
from normbench.data.tokens import sample_windows


def mask_tokens(tokens, vocab: int, mask_prob: float, generator, real=None):
    """tokens (B, T) int64 in 0..V-1 -> (inputs, targets, mask): inputs with the chosen positions replaced,
    targets = tokens, mask (B, T) bool = the chosen positions (the ones the loss counts). `real` (B, T)
    bool, for padded batches: only real positions are chosen (the draws are the same either way)."""
    import torch

    u = torch.rand(tokens.shape, generator=generator)
    mask = u < mask_prob
    if real is not None:
        mask &= real
    if not bool(mask.any()):  # a tiny batch with no position chosen: take the most likely one
        candidates = u if real is None else u.masked_fill(~real, 2.0)
        mask.view(-1)[int(candidates.view(-1).argmin())] = True
    rule = torch.rand(tokens.shape, generator=generator)  # drawn for every position: stable stream
    random_tokens = torch.randint(vocab, tokens.shape, generator=generator)
    inputs = tokens.clone()
    inputs[mask & (rule < 0.8)] = vocab  # the [MASK] id: the embedding's extra row
    swap = mask & (rule >= 0.8) & (rule < 0.9)
    inputs[swap] = random_tokens[swap]
    return inputs, tokens, mask


def objective_batch(rows, batch: int, seq: int, objective: str, vocab: int, mask_prob: float, windows, masks):
    """(inputs, targets, mask) of one batch: causal = (x, x shifted by one, None); masked = the window x
    with masked positions (mask_tokens). `windows` draws the windows, `masks` the masked positions."""
    x, y = sample_windows(rows, batch, seq, windows)
    if objective == "causal":
        return x, y, None
    return mask_tokens(x, vocab, mask_prob, masks)


def padded_objective_batch(units, idx, objective: str, vocab: int, mask_prob: float, masks, pad_id: int):
    """(inputs, targets, mask, pad) of one padded batch of units (data/padded.py): pad (B, T) True at the
    inputs' padded positions (the model's key-padding mask), inputs and targets `pad_id` there, and mask
    the positions the loss counts, real ones only: causal = every real target (x = unit[:-1], y =
    unit[1:]); masked = the chosen positions of the real tokens."""
    tokens, pad = pad_units(units, idx, pad_id)
    if objective == "causal":
        return tokens[:, :-1], tokens[:, 1:], ~pad[:, 1:], pad[:, :-1]
    inputs, targets, mask = mask_tokens(tokens, vocab, mask_prob, masks, real=~pad)
    return inputs, targets, mask, pad


def unigram_loss(unigram_logp, targets, mask) -> float:
    """The unigram model's loss (nats) on the positions the objective scores: all of them, or the masked."""
    picked = targets if mask is None else targets[mask]
    return float(-unigram_logp[picked].mean())
