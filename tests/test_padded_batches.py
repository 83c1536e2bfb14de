"""Padded batches of whole sentences or lines: units are cut as documented, every unit is drawn once per
epoch (bucketed: neighbours in length), only real positions are masked or scored, and the token-histogram
ratio is 1 for i.i.d. tokens and 0 for batches identical to the pool."""

from __future__ import annotations

import math

import pytest
import torch

from normbench.data.histogram import HistogramVariation, pool_distribution
from normbench.data.masking import mask_tokens, padded_objective_batch
from normbench.data.padded import pad_units, unit_batches
from normbench.data.segments import segment, split_units

LUT = torch.arange(256)  # byte value = token id


def test_sentences_and_lines_are_cut_as_documented():
    text = b"One cat. Two dogs? Yes!  x\n    indented line.\n\n\nA very long sentence here"
    assert split_units(text, "line", 100) == [
        b"One cat. Two dogs? Yes!  x",
        b"    indented line.",
        b"A very long sentence here",
    ]
    assert split_units(text, "sentence", 100) == [
        b"One cat.",
        b"Two dogs?",
        b"Yes!",
        b" x",  # the split takes one space; the other stays (only trailing whitespace is cut)
        b"    indented line.",
        b"A very long sentence here",
    ]
    assert split_units(b"a\nb c\n", "line", 100) == [b"b c"]  # "a": fewer than MIN_TOKENS, dropped
    # a unit longer than the sequence is cut into consecutive pieces, none of the text lost
    assert split_units(b"abcdefghij", "line", 4) == [b"abcd", b"efgh", b"ij"]


def test_units_are_token_ids_back_to_back():
    units = segment(b"ab cd.\nefg\n", LUT, "line", 8)
    assert len(units) == 2 and units.lengths.tolist() == [6, 3] and units.starts.tolist() == [0, 6]
    assert bytes(units.unit(1).tolist()) == b"efg"


def _units(lengths):
    text = b"\n".join(bytes([65 + i % 26]) * n for i, n in enumerate(lengths))
    return segment(text, LUT, "line", 64)


def test_padded_batching_draws_every_unit_once_per_epoch():
    units = _units([2 + (i * 7) % 30 for i in range(40)])
    stream = unit_batches(units, 8, "padded", torch.Generator().manual_seed(0))
    epoch = [i for _ in range(5) for i in next(stream)]
    assert sorted(epoch) == list(range(40))
    again = unit_batches(units, 8, "padded", torch.Generator().manual_seed(0))
    assert next(again) == next(unit_batches(units, 8, "padded", torch.Generator().manual_seed(0)))


def test_bucketed_batches_hold_neighbours_in_length():
    lengths = [2 + (i * 7) % 30 for i in range(40)]
    units = _units(lengths)
    stream = unit_batches(units, 8, "bucketed", torch.Generator().manual_seed(0))
    batches = [next(stream) for _ in range(5)]
    assert sorted(i for b in batches for i in b) == list(range(40))
    ranked = sorted(lengths)
    for b in batches:  # each batch is 8 consecutive units of the length order
        got = sorted(lengths[i] for i in b)
        assert any(got == ranked[k : k + 8] for k in range(0, 40, 8))


def test_pad_units_right_pads_to_the_longest():
    units = _units([3, 5, 2])
    tokens, pad = pad_units(units, [0, 1, 2], fill=999)
    assert tokens.shape == (3, 5)
    assert pad.tolist() == [[False] * 3 + [True] * 2, [False] * 5, [False] * 2 + [True] * 3]
    assert (tokens[pad] == 999).all() and (tokens[~pad] != 999).all()


def test_only_real_positions_are_masked_or_scored():
    units = _units([3, 20, 6, 11])
    g = torch.Generator().manual_seed(1)
    inputs, targets, mask, pad = padded_objective_batch(units, [0, 1, 2, 3], "masked", 90, 0.5, g, pad_id=91)
    assert mask.any() and not (mask & pad).any()
    assert (inputs[pad] == 91).all() and (targets[~pad] < 90).all()
    x, y, real, pad = padded_objective_batch(units, [0, 1, 2, 3], "causal", 90, 0.5, g, pad_id=91)
    assert x.shape == (4, 19) and torch.equal(x[:, 1:], y[:, :-1])  # y is x shifted by one
    assert real.sum() == sum(n - 1 for n in (3, 20, 6, 11))  # every real target, no pad target
    assert (y[real] < 90).all()


def test_masking_without_padding_draws_as_before():
    tokens = torch.randint(50, (4, 16), generator=torch.Generator().manual_seed(0))
    a = mask_tokens(tokens, 50, 0.15, torch.Generator().manual_seed(3))
    b = mask_tokens(
        tokens, 50, 0.15, torch.Generator().manual_seed(3), real=torch.ones(4, 16, dtype=torch.bool)
    )
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def test_a_batch_of_pads_but_one_still_masks_a_real_position():
    real = torch.zeros(1, 8, dtype=torch.bool)
    real[0, 5] = True
    _, _, mask = mask_tokens(torch.zeros(1, 8, dtype=torch.long), 4, 1e-9, torch.Generator(), real=real)
    assert mask.tolist() == [[False] * 5 + [True] + [False] * 2]


def test_histogram_ratio_is_one_for_iid_tokens():
    p = torch.tensor([0.5, 0.2, 0.2, 0.1], dtype=torch.float64)
    hist = HistogramVariation(p)
    g = torch.Generator().manual_seed(0)
    for _ in range(4000):
        hist.add(torch.multinomial(p, 64, replacement=True, generator=g))
    r = hist.result()
    assert r["iid"] == pytest.approx(math.sqrt((1 - float((p**2).sum())) / 64))
    assert r["ratio"] == pytest.approx(1.0, abs=0.03)  # 4000 batches: the estimate's sd is ~1%


def test_histogram_ratio_is_zero_when_every_batch_is_the_pool():
    tokens = torch.tensor([0, 0, 1, 2, 2, 2, 3, 3])
    hist = HistogramVariation(pool_distribution(tokens, 4))
    for _ in range(3):
        hist.add(tokens[torch.randperm(8)])
    assert hist.result()["dist"] == 0.0 and hist.result()["ratio"] == 0.0


def test_histogram_distance_of_one_batch_is_its_closed_form():
    hist = HistogramVariation(torch.tensor([0.5, 0.5], dtype=torch.float64))
    hist.add(torch.tensor([0, 0, 0, 1]))  # h = (3/4, 1/4): ‖h − p‖ = √(2 · (1/4)²)
    assert hist.result()["dist"] == pytest.approx(math.sqrt(2) / 4)
    assert hist.result()["iid"] == pytest.approx(math.sqrt(0.5 / 4))
