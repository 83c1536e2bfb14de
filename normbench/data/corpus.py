"""A byte-level corpus from the Python standard library's own source files (every top-level *.py of the
running interpreter's stdlib, in sorted order), read at run time: nothing is copied into the repository,
and the exact text used is recorded by its SHA-256 and file count. Every 10th file is held out, so the
held-out text is spread over the alphabet of module names like the training text."""

from __future__ import annotations

import hashlib
import sys
import sysconfig
from pathlib import Path

from normbench.data.tokens import CorpusError, TokenData, entropy_nats

HELD_OUT_EVERY = 10  # file i is held out when i % 10 == 9


def stdlib_corpus(directory: str = "") -> TokenData:
    import torch

    root = Path(directory or sysconfig.get_paths()["stdlib"])
    try:
        files = sorted(root.glob("*.py"))
        texts = [f.read_bytes() for f in files]
    except OSError as exc:
        raise CorpusError(f"cannot read the corpus in {root}: {exc.strerror or exc}") from None
    blob = b"".join(texts)
    held = b"".join(t for i, t in enumerate(texts) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1)
    if len(blob) < 10_000 or len(held) < 1_000:
        raise CorpusError(
            f"cannot read the corpus in {root}: found {len(files)} *.py files, {len(blob)} bytes "
            "(need at least 10 files and 10000 bytes)"
        )
    train_bytes = b"".join(t for i, t in enumerate(texts) if i % HELD_OUT_EVERY != HELD_OUT_EVERY - 1)
    lut, vocab = byte_vocabulary(blob)
    train, held_out = (
        lut[torch.frombuffer(bytearray(b), dtype=torch.uint8).long()] for b in (train_bytes, held)
    )
    counts = torch.bincount(train, minlength=vocab).double()
    return TokenData(
        train=train[None, :],
        held_out=held_out[None, :],
        vocab=vocab,
        unigram_entropy=entropy_nats(counts.tolist()),
        optimal_loss=None,
        unigram_logp=smoothed_unigram_logp(counts),
        info={
            "source": "stdlib",
            "path": str(root),
            "files": len(files),
            "bytes": len(blob),
            "sha256": hashlib.sha256(blob).hexdigest(),
            "python": sys.version.split()[0],
            "held_out_unigram_xent": float(-smoothed_unigram_logp(counts)[held_out].mean()),
        },
    )


def byte_vocabulary(blob: bytes):
    """(lut, vocab): lut maps each byte value that occurs to a compact id 0..vocab-1 (others to -1)."""
    import torch

    counts = torch.bincount(torch.frombuffer(bytearray(blob), dtype=torch.uint8).long(), minlength=256)
    present = torch.nonzero(counts).flatten()
    lut = torch.full((256,), -1, dtype=torch.long)
    lut[present] = torch.arange(len(present))
    return lut, len(present)


def smoothed_unigram_logp(train_counts):
    """log p of the add-one-smoothed unigram model of the training text (every id gets p > 0)."""
    import torch

    return torch.log((train_counts + 1) / (train_counts + 1).sum()).float()
