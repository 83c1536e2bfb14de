"""The generator of data/seq2seq.py's pairs (its docstring describes the tasks): deterministic in (task, words,
lengths, seed) on every machine.

Random numbers: the 64-bit outputs of numpy's PCG64 (`random_raw`, whose stream numpy keeps stable), turned
into integers here rather than by Generator methods, whose algorithms may change between numpy versions.
The SHA-256 of every token is stored with each case (a data_pairs row), so a change shows."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from normbench.data.seq2seq import EOS, FIRST_WORD, HELD_OUT_PAIRS, PAD, TASKS, TRAIN_PAIRS, identity


@dataclass
class PairData:
    """src: (pairs, max_len) int64, PAD-padded; tgt: (pairs, max_len + 1), the target and its EOS."""

    train_src: Any
    train_tgt: Any
    held_src: Any
    held_tgt: Any
    vocab: int
    unigram_logp: Any  # (vocab,) log-probabilities of the target tokens (-inf for PAD and BOS)
    unigram_entropy: float  # nats per target token
    info: dict[str, Any] = field(default_factory=dict)


def _uniform(rng, n: int) -> np.ndarray:
    """n floats in [0, 1) from the raw 64-bit stream: the top 53 bits."""
    return (rng.bit_generator.random_raw(n) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _below(rng, high: int, n: int) -> np.ndarray:
    return np.minimum((_uniform(rng, n) * high).astype(np.int64), high - 1)


def _translate(x: np.ndarray, lexicon: np.ndarray, adjective: np.ndarray) -> np.ndarray:
    out, i = [], 0
    while i < len(x):
        if i + 1 < len(x) and adjective[x[i]] and not adjective[x[i + 1]]:
            out += [lexicon[x[i + 1]], lexicon[x[i]]]  # "A N" -> "N' A'"
            i += 2
        else:
            out.append(lexicon[x[i]])
            i += 1
    return np.asarray(out, dtype=np.int64)


def transform(task: str, x: np.ndarray, lexicon: np.ndarray, adjective: np.ndarray) -> np.ndarray:
    """The target words of source words x (0-based word indices)."""
    if task == "copy":
        return x.copy()
    if task == "reverse":
        return x[::-1].copy()
    if task == "sort":
        return np.sort(x)
    if task == "translate":
        return _translate(x, lexicon, adjective)
    raise ValueError(f"task {task!r} is not one of {', '.join(TASKS)}")


# The held-out draw keeps what training has not seen; at most this many draws per pair wanted, so that a
# source space training (nearly) exhausted fails with its reason instead of drawing forever.
DRAWS_PER_PAIR = 64


def _pairs(rng, task, words, min_len, max_len, count, lexicon, adjective, skip=frozenset()):
    """count (source, target) word arrays whose sources are not in `skip`."""
    out: list = []
    drawn = 0
    while len(out) < count:
        if drawn >= DRAWS_PER_PAIR * count:
            raise ValueError(
                f"only {len(out)} of {count} held-out sources unseen in training after {drawn} draws "
                f"(task_words = {words}, lengths {min_len}..{max_len}): raise task_words or max_len"
            )
        n = count - len(out)
        lengths = min_len + _below(rng, max_len - min_len + 1, n)
        tokens = _below(rng, words, int(lengths.sum()))
        drawn += n
        for x in np.split(tokens, np.cumsum(lengths)[:-1]):
            if tuple(x) not in skip:
                out.append((x, transform(task, x, lexicon, adjective)))
    return out


def _padded(seqs, width: int, eos: bool) -> np.ndarray:
    rows = np.full((len(seqs), width), PAD, dtype=np.int64)
    for i, s in enumerate(seqs):
        ids = np.concatenate([s + FIRST_WORD, [EOS]]) if eos else s + FIRST_WORD
        rows[i, : len(ids)] = ids
    return rows


def generate_pairs(task: str, words: int, min_len: int, max_len: int, seed: int) -> PairData:
    import torch

    if task not in TASKS:
        raise ValueError(f"task {task!r} is not one of {', '.join(TASKS)}")
    rng = np.random.Generator(np.random.PCG64(seed))
    lexicon = np.argsort(_uniform(rng, words), kind="stable")  # word i -> target word lexicon[i]
    adjective = _uniform(rng, words) < 0.5  # the class of each source word
    train = _pairs(rng, task, words, min_len, max_len, TRAIN_PAIRS, lexicon, adjective)
    seen = frozenset(tuple(x) for x, _ in train)
    held = _pairs(rng, task, words, min_len, max_len, HELD_OUT_PAIRS, lexicon, adjective, seen)
    arrays = [
        _padded([x for x, _ in train], max_len, eos=False),
        _padded([y for _, y in train], max_len + 1, eos=True),
        _padded([x for x, _ in held], max_len, eos=False),
        _padded([y for _, y in held], max_len + 1, eos=True),
    ]
    vocab = words + FIRST_WORD
    targets = arrays[1][arrays[1] != PAD]
    counts = np.bincount(targets, minlength=vocab).astype(np.float64)
    p = counts / counts.sum()
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    digest = hashlib.sha256(b"".join(a.tobytes() for a in arrays)).hexdigest()
    return PairData(
        *(torch.from_numpy(a) for a in arrays),
        vocab=vocab,
        unigram_logp=torch.from_numpy(logp).float(),
        unigram_entropy=float(-(p[p > 0] * np.log(p[p > 0])).sum()),
        info={
            "source": "seq2seq",
            "identity": identity(task, words, min_len, max_len, seed),
            "sha256": digest,
            "pairs": len(train) + len(held),
        },
    )
