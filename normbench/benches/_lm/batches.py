"""The training loop's batch streams: random windows (the default, data/tokens.py) or padded batches of
whole sentences or lines (data/padded.py), each batch a Batch(inputs, targets, mask, pad). pad is None for
windows; for padded batches it is the (B, T) key-padding mask the model passes to attention and to its
batch-statistics norms. `pool` is what a stream draws its tokens from (the token-histogram measurement's
p, data/histogram.py)."""

from __future__ import annotations

from typing import NamedTuple

import torch

from normbench.data import objective_batch
from normbench.data.histogram import HistogramVariation, pool_distribution
from normbench.data.masking import padded_objective_batch
from normbench.data.padded import unit_batches
from normbench.data.segments import segment


class Batch(NamedTuple):
    inputs: torch.Tensor  # (B, T) token ids
    targets: torch.Tensor  # (B, T)
    mask: torch.Tensor | None  # (B, T) the positions the loss counts; None = every position
    pad: torch.Tensor | None  # (B, T) True at padded inputs; None = no padding


def sample_tokens(batch: Batch, objective: str) -> torch.Tensor:
    """The batch's real tokens as drawn, before masking: a masked batch's targets (its original tokens),
    a causal batch's inputs; padded positions left out."""
    source = batch.targets if objective == "masked" else batch.inputs
    return source if batch.pad is None else source[~batch.pad]


def units_of(data, split: int, rule: str, max_len: int):
    """The units of the training (split 0) or held-out (1) text, segmented once per data object."""
    key = ("units", split, rule, max_len)
    if key not in data.derived:
        data.derived[key] = segment(data.text[split], data.byte_ids, rule, max_len)
    return data.derived[key]


def unit_length(spec) -> int:
    """The longest unit: seq tokens for the masked objective, seq + 1 for the causal (input and target)."""
    return spec.seq + (spec.objective == "causal")


def pool(data, spec, split: int) -> torch.Tensor:
    """Every token a stream of this split can draw (the corpus row, or its units back to back)."""
    if spec.batching == "windows":
        return (data.train if split == 0 else data.held_out).reshape(-1)
    return units_of(data, split, spec.segment, unit_length(spec)).tokens


def batches(data, spec, split: int, windows_seed: int, masks_seed: int, pad_id: int | None = None):
    """An endless stream of Batches for the spec's objective and batching, from two seeded generators
    (which windows or units; which positions are masked)."""
    windows, masks = torch.Generator().manual_seed(windows_seed), torch.Generator().manual_seed(masks_seed)
    if spec.batching == "windows":
        rows = data.train if split == 0 else data.held_out
        while True:
            x, y, mask = objective_batch(
                rows, spec.batch, spec.seq, spec.objective, data.vocab, spec.mask_prob, windows, masks
            )
            yield Batch(x, y, mask, None)
    if pad_id is None:
        raise ValueError(f"batching {spec.batching!r} needs the model's pad id")
    units = units_of(data, split, spec.segment, unit_length(spec))
    for idx in unit_batches(units, spec.batch, spec.batching, windows, spec.max_tokens):
        yield Batch(
            *padded_objective_batch(units, idx, spec.objective, data.vocab, spec.mask_prob, masks, pad_id)
        )


def batch_loss(model, batch: Batch, device):
    """The model's mean loss over the batch's counted positions, with its key-padding mask."""
    x, y, mask, pad = (None if t is None else t.to(device) for t in batch)
    if pad is None:  # the call the fixed-window batches have always made
        return model(x, y, mask=mask)
    return model(x, y, mask=mask, key_padding_mask=pad)


class BatchesDrawn:
    """What the training batches were: their token histograms against the i.i.d. floor
    (data/histogram.py) and, padded, the share of padded positions and the real tokens per batch."""

    def __init__(self, data, spec):
        self.objective = spec.objective
        self.hist = HistogramVariation(pool_distribution(pool(data, spec, 0), data.vocab))
        self.padded = self.positions = 0

    def add(self, batch: Batch) -> None:
        self.hist.add(sample_tokens(batch, self.objective))
        self.positions += batch.inputs.numel()
        self.padded += 0 if batch.pad is None else int(batch.pad.sum())

    def rows(self) -> list[dict]:
        h, n = self.hist.result(), max(self.hist.batches, 1)
        return [
            {"metric": "token_hist_dist", "unit": "L2", "value": h["dist"]},
            {"metric": "token_hist_dist_iid", "unit": "L2", "value": h["iid"]},
            {"metric": "token_hist_over_iid", "unit": "ratio", "value": h["ratio"]},
            {"metric": "pad_fraction", "unit": "ratio", "value": self.padded / max(self.positions, 1)},
            {
                "metric": "real_tokens_per_batch",
                "unit": "tokens",
                "value": (self.positions - self.padded) / n,
            },
        ]
