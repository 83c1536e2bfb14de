"""Token data for the training benches, with no download: generated English-like prose, byte-identical
everywhere (textgen.py, loaded and hash-checked by corpus.py; or a user's own text), and a seeded Markov chain whose entropy rate is known exactly (markov.py).

Both return a TokenData: train and held-out token rows, the vocabulary size, the unigram entropy (the loss
of a model that has learned nothing but symbol frequencies) and, where known, the optimal loss."""

from normbench.data.masking import mask_tokens, objective_batch, unigram_loss
from normbench.data.token_data import CorpusError, TokenData
from normbench.data.tokens import data_identity, load_data, sample_windows

__all__ = [
    "CorpusError",
    "TokenData",
    "data_identity",
    "load_data",
    "mask_tokens",
    "objective_batch",
    "sample_windows",
    "unigram_loss",
]
