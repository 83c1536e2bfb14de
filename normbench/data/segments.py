"""Whole sentences or lines of a byte corpus as units of varying length, for padded batches (the way
translation and LM toolkits batch text: one sentence per row, padded to the batch's longest).

Details: docs/methodology.md, "Padded batches of whole sentences"."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

SEGMENTS = ("sentence", "line")
MIN_TOKENS = 2  # a causal unit needs an input and a target
SPLIT = {"line": re.compile(rb"\n"), "sentence": re.compile(rb"\n|(?<=[.?!]) ")}


@dataclass(frozen=True)
class Units:
    """Units stored flat: unit i is tokens[starts[i] : starts[i] + lengths[i]] (int64 tensors)."""

    tokens: Any
    starts: Any
    lengths: Any

    def __len__(self) -> int:
        return int(self.lengths.numel())

    def unit(self, i: int):
        s = int(self.starts[i])
        return self.tokens[s : s + int(self.lengths[i])]


def split_units(text: bytes, rule: str, max_len: int) -> list[bytes]:
    """The units of `text` under `rule`, each at most max_len bytes (longer ones cut into pieces)."""
    if rule not in SPLIT:
        raise ValueError(f"segment {rule!r} is not one of {', '.join(SEGMENTS)}")
    out = []
    for piece in SPLIT[rule].split(text):
        piece = piece.rstrip()
        if not piece.strip():
            continue
        for k in range(0, len(piece), max_len):
            chunk = piece[k : k + max_len]
            if len(chunk) >= MIN_TOKENS:
                out.append(chunk)
    return out


def segment(text: bytes, byte_ids, rule: str, max_len: int) -> Units:
    """`text` cut into units, mapped to token ids by the corpus's byte -> id table."""
    import torch

    pieces = split_units(text, rule, max_len)
    if not pieces:
        raise ValueError(f"no {rule} of at least {MIN_TOKENS} tokens in the text")
    lengths = torch.tensor([len(p) for p in pieces], dtype=torch.long)
    starts = torch.cumsum(lengths, 0) - lengths
    flat = torch.frombuffer(bytearray(b"".join(pieces)), dtype=torch.uint8).long()
    return Units(byte_ids[flat], starts, lengths)
