"""The token-budget batcher follows fairseq's rule (rows × longest ≤ max_tokens, every unit once an epoch,
bucketed batches of neighbours in length), and the stability bench refuses a budget that cannot hold a unit."""

from __future__ import annotations

import torch

from normbench.data.padded import budget_groups, unit_batches
from normbench.data.segments import segment

LUT = torch.arange(256)


def _units(lengths):
    text = b"\n".join(bytes([65 + i % 26]) * n for i, n in enumerate(lengths))
    return segment(text, LUT, "line", 64)


def test_budget_groups_fill_greedily_up_to_rows_times_longest():
    lengths = [3, 3, 4, 10, 2, 2, 2, 2, 2]
    groups = budget_groups(list(range(9)), lengths, 12)
    # [3, 3, 4]: 3 x 4 = 12 fits; adding 10 would be 4 x 10; [10] alone; then 2s up to 6 rows of 2 = 12
    assert groups == [[0, 1, 2], [3], [4, 5, 6, 7, 8]]
    for g in groups:
        assert len(g) * max(lengths[i] for i in g) <= 12


def test_a_unit_longer_than_the_budget_is_refused():
    import pytest

    with pytest.raises(ValueError, match="does not fit max_tokens"):
        budget_groups([0], [20], 12)


def test_budget_batches_draw_every_unit_once_per_epoch_and_stay_in_budget():
    lengths = [2 + (i * 7) % 30 for i in range(60)]
    units = _units(lengths)
    for batching in ("padded", "bucketed"):
        stream = unit_batches(units, 8, batching, torch.Generator().manual_seed(0), max_tokens=64)
        seen: list[int] = []
        while len(seen) < 60:
            b = next(stream)
            assert len(b) * max(lengths[i] for i in b) <= 64
            seen += b
        assert sorted(seen) == list(range(60))
    # bucketed under a budget: the rows of a batch are neighbours in the length order
    stream = unit_batches(units, 8, "bucketed", torch.Generator().manual_seed(1), max_tokens=64)
    ranked = sorted(lengths)
    for _ in range(5):
        got = sorted(lengths[i] for i in next(stream))
        assert any(got == ranked[k : k + len(got)] for k in range(60 - len(got) + 1))


def test_fixed_rows_are_unchanged_by_the_budget_code():
    units = _units([2 + (i * 7) % 30 for i in range(40)])
    a = unit_batches(units, 8, "bucketed", torch.Generator().manual_seed(3))
    assert [len(next(a)) for _ in range(5)] == [8] * 5


def test_the_bench_refuses_a_budget_below_a_unit_or_on_windows():
    from normbench.benches.stability import padding_problems

    base = {"batching": "bucketed", "segment": "sentence", "data": "stdlib", "placement": "pre"}
    base |= {"seq": 64, "objective": "masked"}
    assert padding_problems({**base, "max_tokens": 2048}, "batchnorm") == []
    assert padding_problems({**base, "max_tokens": 32}, "batchnorm")[0][0] == "max_tokens"
    assert padding_problems({**base, "batching": "windows", "max_tokens": 2048}, None)[0][0] == "max_tokens"
