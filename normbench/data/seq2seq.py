"""Generated sequence-to-sequence pairs for the encoder-decoder, with no download: the same pairs on every
machine for a given (task, vocabulary, lengths, seed), checked by the SHA-256 of their tokens (stored with
every case).

Details: docs/methodology.md, "The encoder-decoder"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PAD, BOS, EOS = 0, 1, 2
FIRST_WORD = 3
TASKS = ("copy", "reverse", "sort", "translate")
GENERATOR = (
    "seq2seq-v1"  # bump when seq2seq_pairs.py changes what it generates: part of every case's identity
)
TRAIN_PAIRS, HELD_OUT_PAIRS = 16384, 1024


@dataclass
class PairBatch:
    """One padded batch, trimmed to its longest pair: src (B, S), tgt_in and tgt (B, T), masks True at PAD."""

    src: Any
    tgt_in: Any
    tgt: Any
    src_pad: Any
    tgt_pad: Any

    def to(self, device) -> PairBatch:
        return PairBatch(
            *(t.to(device) for t in (self.src, self.tgt_in, self.tgt, self.src_pad, self.tgt_pad))
        )

    @property
    def tokens(self) -> int:
        return int((~self.tgt_pad).sum())


def identity(task: str, words: int, min_len: int, max_len: int, seed: int) -> str:
    """What identifies the pairs a case trains on (enters the case id; the SHA-256 is stored as a row)."""
    return f"{GENERATOR} task={task} words={words} len={min_len}-{max_len} seed={seed}"


def pair_batch(src_rows, tgt_rows, index) -> PairBatch:
    """The pairs at `index` (a (B,) tensor), trimmed to the longest, with BOS-shifted decoder inputs."""
    import torch

    src, tgt = src_rows[index], tgt_rows[index]
    src = src[:, : int((src != PAD).sum(1).max())]
    tgt = tgt[:, : int((tgt != PAD).sum(1).max())]
    tgt_pad = tgt == PAD
    shifted = torch.cat([torch.full_like(tgt[:, :1], BOS), tgt[:, :-1]], dim=1)  # (B, T): BOS, y_1 .. y_{T-1}
    return PairBatch(src, shifted.masked_fill(tgt_pad, PAD), tgt, src == PAD, tgt_pad)


def unigram_pair_loss(unigram_logp, batch: PairBatch) -> float:
    """The unigram model's mean loss (nats) on the batch's real target tokens."""
    return float(-unigram_logp[batch.tgt[~batch.tgt_pad]].mean())
