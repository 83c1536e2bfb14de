"""Batches of whole units (sentences or lines, data/segments.py), padded to the batch's longest unit, with
the mask of padded positions: what a Transformer toolkit feeds a model, and what BatchNorm's statistics
must leave out (the PowerNorm authors' MaskBatchNorm / MaskPowerNorm take it as `pad_mask`).

Details: docs/methodology.md, "Notes from the code"."""

from __future__ import annotations

from collections.abc import Iterator

BATCHINGS = ("windows", "padded", "bucketed")  # windows: data/tokens.py sample_windows


def unit_batches(units, batch: int, batching: str, generator) -> Iterator[list[int]]:
    """An endless stream of lists of `batch` unit indices."""
    import torch

    n = len(units)
    if n < batch:
        raise ValueError(f"a batch of {batch} units needs at least {batch} units; the text has {n}")
    while True:
        order = torch.randperm(n, generator=generator)
        if batching == "bucketed":
            order = order[torch.sort(units.lengths[order], stable=True).indices]
        groups = order[: n - n % batch].view(-1, batch)
        if batching == "bucketed":
            groups = groups[torch.randperm(len(groups), generator=generator)]
        elif batching != "padded":
            raise ValueError(f"batching {batching!r} is not padded or bucketed")
        yield from (g.tolist() for g in groups)


def pad_units(units, idx: list[int], fill: int):
    """(tokens (B, T), pad (B, T) bool): the units right-padded with `fill` to the longest, T = its length;
    pad is True at the padded positions."""
    import torch

    lengths = units.lengths[idx]
    width = int(lengths.max())
    tokens = torch.full((len(idx), width), fill, dtype=torch.long)
    for row, i in enumerate(idx):
        piece = units.unit(i)
        tokens[row, : len(piece)] = piece
    pad = torch.arange(width)[None, :] >= lengths[:, None]
    return tokens, pad
