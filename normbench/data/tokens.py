"""TokenData, random training windows, and the loader that picks a source by name."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

SOURCES = ("text", "stdlib", "markov")
MARKOV_GENERATOR = "markov-v1"  # bump when markov.py changes what it samples: part of the case identity


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


def load_data(source: str, *, seed: int, corpus_dir: str = "") -> TokenData:
    if source in ("text", "stdlib"):
        from normbench.data.corpus import byte_corpus

        return byte_corpus(source, corpus_dir)
    if source == "markov":
        from normbench.data.markov import markov_data

        return markov_data(seed)
    raise ValueError(f"unknown data source {source!r}; one of {', '.join(SOURCES)}")


def data_identity(source: str, *, seed: int, corpus_dir: str = "") -> str:
    """What identifies the tokens a case trains on: the corpus SHA-256, or the Markov generator and seed."""
    if source == "markov":
        return f"{MARKOV_GENERATOR} seed {seed}"
    from normbench.data.corpus import data_identity as corpus_identity

    return corpus_identity(source, corpus_dir)


def check_windows_fit(data: TokenData, seq: int) -> None:
    """A window of seq + 1 tokens must fit in a row of the training and of the held-out text (a small
    corpus_dir holds out only every 10th file)."""
    for name, rows in (("training", data.train), ("held-out", data.held_out)):
        length = int(rows.shape[1])
        if length <= seq:
            raise CorpusError(
                f"seq = {seq} needs windows of {seq + 1} tokens, but the {name} text has {length}: "
                "lower seq or give a larger corpus"
            )


def sample_windows(rows, batch: int, seq: int, generator):
    """(x, y), each (batch, seq): random windows of seq + 1 tokens, y shifted one to the left of x."""
    import torch

    n_rows, length = rows.shape
    r = torch.randint(n_rows, (batch,), generator=generator)
    start = torch.randint(length - seq, (batch,), generator=generator)
    idx = start[:, None] + torch.arange(seq + 1)[None, :]  # (batch, seq + 1)
    chunk = rows[r[:, None], idx]
    return chunk[:, :-1], chunk[:, 1:]


def entropy_nats(counts) -> float:
    """Shannon entropy (nats) of the distribution proportional to counts."""
    total = float(sum(counts))
    return -sum(c / total * math.log(c / total) for c in counts if c > 0)
