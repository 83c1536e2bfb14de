"""Batches of whole units (sentences or lines, data/segments.py), padded to the batch's longest unit, with
the mask of padded positions: what a Transformer toolkit feeds a model, and what BatchNorm's statistics
must leave out (the PowerNorm authors' MaskPowerNorm takes it as `pad_mask`). A batch is
either a fixed number of rows or, as fairseq makes it (`--max-tokens`, fairseq/data/data_utils.py
batch_by_size), as many rows as fit a token budget: rows × longest ≤ max_tokens.

Details: docs/methodology.md, "Padded batches of whole sentences"."""

from __future__ import annotations

from collections.abc import Iterator

BATCHINGS = ("windows", "padded", "bucketed")  # windows: data/tokens.py sample_windows


def unit_batches(units, batch: int, batching: str, generator, max_tokens: int = 0) -> Iterator[list[int]]:
    """An endless stream of lists of unit indices: `batch` units each, or (max_tokens > 0) as many as fit
    the token budget. Bucketed: each epoch's units in length order (random among equal lengths), cut into
    batches, the batches shuffled; padded: the units in random order."""
    import torch

    if batching not in ("padded", "bucketed"):
        raise ValueError(f"batching {batching!r} is not padded or bucketed")
    n = len(units)
    if not max_tokens and n < batch:
        raise ValueError(f"a batch of {batch} units needs at least {batch} units; the text has {n}")
    while True:
        order = torch.randperm(n, generator=generator)
        if batching == "bucketed":
            order = order[torch.sort(units.lengths[order], stable=True).indices]
        if max_tokens:
            groups = budget_groups(order.tolist(), units.lengths.tolist(), max_tokens)
        else:
            groups = order[: n - n % batch].view(-1, batch).tolist()
        if batching == "bucketed":
            groups = [groups[i] for i in torch.randperm(len(groups), generator=generator).tolist()]
        yield from groups


def budget_groups(order: list[int], lengths: list[int], max_tokens: int) -> list[list[int]]:
    """fairseq's batch_by_size rule with required_batch_size_multiple = 1: walk `order`, adding a unit
    while (rows + 1) × longest ≤ max_tokens, else start a new batch with it. The epoch's last, partial
    batch is kept (fairseq keeps it too)."""
    groups: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for i in order:
        length = lengths[i]
        if length > max_tokens:
            raise ValueError(f"a unit of {length} tokens does not fit max_tokens = {max_tokens}")
        if current and (len(current) + 1) * max(longest, length) > max_tokens:
            groups.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, length)
    if current:
        groups.append(current)
    return groups


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
