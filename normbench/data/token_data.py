"""The types every data source returns (TokenData) or raises (CorpusError), and the entropy they report."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


class CorpusError(RuntimeError):
    """The corpus cannot be read; the message is one line saying where and why."""


@dataclass
class TokenData:
    """train, held_out: int64 tensors of shape (rows, length); a window never crosses a row boundary
    (the corpus is one row; the Markov data is one row per independent chain)."""

    train: Any
    held_out: Any
    vocab: int
    unigram_entropy: float  # nats per token
    optimal_loss: float | None  # the entropy rate when the source is known exactly, else None
    unigram_logp: Any = (
        None  # (vocab,) log-probabilities of the unigram model: the "learned nothing" baseline
    )
    info: dict[str, Any] = field(default_factory=dict)  # what to record about the source (hash, files, ...)
    # byte corpora: the training and held-out text as bytes and the byte -> id table, which padded
    # batching cuts into sentences or lines (data/segments.py); None for the Markov chain
    text: tuple[bytes, bytes] | None = None
    byte_ids: Any = None
    derived: dict[Any, Any] = field(default_factory=dict, repr=False)  # memo: units per (split, rule, length)


def entropy_nats(counts) -> float:
    """Shannon entropy (nats) of the distribution proportional to counts."""
    total = float(sum(counts))
    return -sum(c / total * math.log(c / total) for c in counts if c > 0)
