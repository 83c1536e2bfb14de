"""The block bench: BatchNorm folded into the Linear equals the unfolded Linear + BatchNorm (exactly in
float64, within the dtype's tolerance in fp32/bf16), a wrong fold fails its case, and every block runs
with its error against float64, its cost over the Linear alone and its paired ratio to a copy."""

from __future__ import annotations

import re

import pytest
import torch
from _stores import create_store
from latency_helpers import per_tensor, run

from normbench.benches import block as block_mod
from normbench.benches.block import BLOCKS, build_block, folded_fn, unfolded_fn


def _params(**kw):
    return {
        "block": "batchnorm_folded",
        "tokens": 32,
        "d": 48,
        "dtype": "fp64",
        "device": "cpu",
        "eps": 1e-5,
        "seed": 0,
        **kw,
    }


def test_fold_is_exact_algebra_in_float64():
    p = _params()
    linear, norm, built = build_block(p, torch.float64)
    x = torch.randn(32, 48, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(
            folded_fn(linear, norm, built, p["eps"])(x), unfolded_fn(linear, built)(x), rtol=1e-12, atol=1e-12
        )


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_folded_equals_unfolded_within_dtype_tolerance(dtype):
    m, _, status, error = run("block", None, None, block="batchnorm_folded", tokens=128, d=256, dtype=dtype)
    assert status == "ok", error
    assert 0 < m["fold_max_diff"] <= m["fold_tolerance"]


def test_wrong_fold_fails_the_case(monkeypatch):
    """A fold that forgets the running mean is caught by the bench's own check, not timed as a win."""

    def fold_without_mean(linear, norm, built, eps):
        import torch.nn.functional as F

        bn = built.module
        s = bn.weight.detach() / torch.sqrt(bn.running_var + eps)
        w, b = linear.weight * s[:, None], s * linear.bias + bn.bias.detach()
        return lambda x: F.linear(x, w, b)

    monkeypatch.setattr(block_mod, "folded_fn", fold_without_mean)
    _, _, status, error = run("block", None, None, block="batchnorm_folded", tokens=64, d=64)
    assert status == "failed" and "folded block differs" in error


@pytest.mark.parametrize("block", BLOCKS)
def test_every_block_runs_with_error_and_cost_over_linear(block):
    m, rows, status, error = run("block", None, None, block=block, tokens=64, d=64)
    assert status == "ok", error
    assert 0 <= per_tensor(rows, "err_abs")["y"] < 1e-4  # fp32 against float64
    assert m["time_median"] > 0 and m["linear_time_median"] > 0 and m["peak_mem"] >= 64 * 64 * 4
    if block == "linear":
        assert m["over_linear"] == 0.0
    # every block, the Linear alone (the reference) too, has a paired ratio compare can gate: over a copy of
    # its input in the same rounds; the others also over the Linear
    rounds = [r["value"] for r in rows if r["metric"] == "time_vs_copy" and r.get("sample") is not None]
    assert rounds and all(v > 0 for v in rounds) and m["time_vs_copy_median"] > 0
    assert ("time_vs_ref_median" in m) == (block != "linear")


def test_block_report_shows_fold_check(tmp_path):
    from normbench.benches.block import Block
    from normbench.core.tables import ReportOptions
    from normbench.suite.expand import expand
    from normbench.suite.load import parse_suite

    suite = parse_suite(
        'name = "b"\n[[bench]]\nkind = "block"\n[bench.sweep]\nblock = ["linear", "batchnorm", '
        '"batchnorm_folded"]\n[bench.params]\ntokens = 32\nd = 32\nsamples = 3\nwarmup_calls = 1\n'
    )
    store = create_store(tmp_path, {"run_id": "r"})
    for case in expand(suite):
        from normbench.benches import RunContext
        from normbench.runner import run_one

        rows, status, error = run_one(case, RunContext(threads=1))
        store.write_case(case, rows, status, error)
    timing, accuracy = Block().report(store.read(), ReportOptions(machine="test"))
    # each column's unit follows its values' magnitude (µs or ms on a slow machine)
    heads = [re.fullmatch(r"(\w+) \((?:µs|ms|s)\)", c) for c in timing.frame.columns[-3:]]
    assert [h and h[1] for h in heads] == ["linear", "batchnorm", "batchnorm_folded"]
    assert "≤" in accuracy.frame.loc[0, "batchnorm_folded vs unfolded"]
