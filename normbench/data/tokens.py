"""Random training windows, and the loader that picks a source by name (the types: data/token_data.py)."""

from __future__ import annotations

from normbench.data.corpus import byte_corpus
from normbench.data.corpus import data_identity as corpus_identity
from normbench.data.token_data import CorpusError, TokenData

SOURCES = ("text", "code", "stdlib", "mix", "markov")
MARKOV_GENERATOR = "markov-v1"  # bump when markov.py changes what it samples: part of the case identity


def load_data(source: str, *, seed: int, corpus_dir: str = "") -> TokenData:
    if source in ("text", "code", "stdlib", "mix"):
        return byte_corpus(source, corpus_dir)
    if source == "markov":
        from normbench.data.markov import markov_data

        return markov_data(seed)
    raise ValueError(f"unknown data source {source!r}; one of {', '.join(SOURCES)}")


def data_identity(source: str, *, seed: int, corpus_dir: str = "") -> str:
    """What identifies the tokens a case trains on: the corpus SHA-256, or the Markov generator and seed."""
    if source == "markov":
        return f"{MARKOV_GENERATOR} seed {seed}"

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
