"""Token data for the training benches, with no download: the Python standard library's own source as a
byte-level corpus (corpus.py) and a seeded Markov chain whose entropy rate is known exactly (markov.py).

Both return a TokenData: train and held-out token rows, the vocabulary size, the unigram entropy (the loss
of a model that has learned nothing but symbol frequencies) and, where known, the optimal loss."""

from normbench.data.tokens import CorpusError, TokenData, load_data, sample_windows

__all__ = ["CorpusError", "TokenData", "load_data", "sample_windows"]
