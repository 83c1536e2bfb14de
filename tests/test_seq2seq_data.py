"""The generated seq2seq pairs are the same bytes for the same settings, follow their task's rule, keep held-out sources unseen, and batch with BOS-shifted inputs and PAD masks."""

import numpy as np
import pytest
import torch

from normbench.data import seq2seq
from normbench.data.seq2seq import BOS, EOS, PAD, pair_batch, unigram_pair_loss
from normbench.data.seq2seq_pairs import generate_pairs, transform

# SHA-256 of the default task's tokens (translate, 32 words, 4-16, seed 1234): a change to
# seq2seq_pairs.py must change this line and seq2seq.GENERATOR, on purpose.
DEFAULT_SHA256 = "1fd11a66e1751c999b5d6dbaae43ad4351a6e440aa61ec99729998172f36fb0e"


@pytest.fixture(scope="module")
def translate():
    return generate_pairs("translate", 32, 4, 16, 1234)


def test_same_settings_same_pairs_and_the_default_is_pinned(translate):
    assert (translate.info["sha256"], seq2seq.GENERATOR) == (DEFAULT_SHA256, "seq2seq-v1")
    assert generate_pairs("translate", 32, 4, 16, 1234).info["sha256"] == translate.info["sha256"]
    assert generate_pairs("translate", 32, 4, 16, 1235).info["sha256"] != translate.info["sha256"]
    assert translate.info["identity"] == seq2seq.identity("translate", 32, 4, 16, 1234)


def test_task_rules():
    x = np.array([0, 1, 2, 3])
    lexicon = np.array([10, 11, 12, 13])
    adjective = np.array([True, False, True, True])  # 0 and 2, 3 are adjectives, 1 a noun
    assert transform("copy", x, lexicon, adjective).tolist() == [0, 1, 2, 3]
    assert transform("reverse", x, lexicon, adjective).tolist() == [3, 2, 1, 0]
    assert transform("sort", np.array([3, 0, 2]), lexicon, adjective).tolist() == [0, 2, 3]
    # "A N A A" -> "N' A'" then "A'" "A'" (an adjective before an adjective keeps its place)
    assert transform("translate", x, lexicon, adjective).tolist() == [11, 10, 12, 13]
    with pytest.raises(ValueError, match="not one of"):
        transform("rot13", x, lexicon, adjective)


def test_lengths_vocabulary_and_held_out_sources_unseen(translate):
    lengths = (translate.train_src != PAD).sum(1)
    assert int(lengths.min()) == 4 and int(lengths.max()) == 16
    assert translate.vocab == 35 and int(translate.train_src.max()) < 35
    assert ((translate.train_tgt == EOS).sum(1) == 1).all()  # one EOS ends every target
    seen = {tuple(r[r != PAD].tolist()) for r in translate.train_src}
    assert not any(tuple(r[r != PAD].tolist()) in seen for r in translate.held_src)
    # the unigram model: the target tokens' frequencies, never PAD or BOS
    assert translate.unigram_logp[PAD] == -float("inf") and translate.unigram_logp[BOS] == -float("inf")
    assert translate.unigram_logp.exp().sum() == pytest.approx(1.0, abs=1e-6)


def test_batch_is_trimmed_shifted_and_masked(translate):
    b = pair_batch(translate.train_src, translate.train_tgt, torch.arange(4))
    real = ~b.tgt_pad
    assert b.src.shape[1] == int((translate.train_src[:4] != PAD).sum(1).max())
    assert (b.tgt_in[:, 0] == BOS).all()
    assert (
        b.tgt_in[:, 1:][real[:, 1:]] == b.tgt[:, :-1][real[:, 1:]]
    ).all()  # teacher forcing: shifted right
    assert (b.tgt_in[b.tgt_pad] == PAD).all() and (b.src_pad == (b.src == PAD)).all()
    loss = unigram_pair_loss(translate.unigram_logp, b)
    assert loss == pytest.approx(float(-translate.unigram_logp[b.tgt[real]].mean()))


def test_reading_the_pairs_loads_neither_numpy_nor_torch():
    import subprocess
    import sys

    code = "import sys, normbench.data.seq2seq; print('numpy' in sys.modules, 'torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split() == [
        "False",
        "False",
    ]
