"""The stability bench: fixed seeds reproduce, a forced NaN is a `diverged` result with its step, stuck and
bad-input cases are reported one line each, and the Markov task's entropy rate is exact."""

import numpy as np
import pytest
import torch
from torch import nn

from normbench.benches import RunContext
from normbench.benches._lm.training import TrainSpec, lr_at
from normbench.core.errors import SuiteError
from normbench.data import CorpusError, load_data, markov, sample_windows
from normbench.norms import registry
from normbench.runner import run_one
from normbench.suite.expand import expand
from normbench.suite.load import parse_suite

TINY = {
    "depth": 2,
    "d": 16,
    "ffn": 32,
    "seq": 16,
    "batch": 4,
    "steps": 12,
    "every": 5,
    "eval_batches": 2,
    "data": "markov",
}


def suite(norms='["layernorm"]', **params) -> str:
    """A one-bench suite of tiny stability runs; params override TINY (None removes a key)."""
    merged = {k: v for k, v in {**TINY, **params}.items() if v is not None}
    lines = "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in merged.items())
    return f'name = "t"\n[[bench]]\nkind = "stability"\nnorms = {norms}\n[bench.params]\n{lines}'


CTX = RunContext(threads=1)  # shared: its memo keeps the generated Markov data between tests


def run(text: str):
    return [run_one(case, CTX) for case in expand(parse_suite(text))]


def series(rows, metric):
    return [(r["step"], r["value"]) for r in rows if r["metric"] == metric]


def test_fixed_seed_reproduces_and_another_seed_differs():
    ((a, status_a, _),) = run(suite(seed=3, placement="pre"))
    ((b, _, _),) = run(suite(seed=3, placement="pre"))
    ((c, _, _),) = run(suite(seed=4, placement="pre"))
    assert status_a in ("ok", "stuck")
    assert series(a, "loss") == series(b, "loss") and len(series(a, "loss")) == 12
    assert series(a, "model_update") == series(b, "model_update")
    assert series(a, "loss") != series(c, "loss")


def test_time_series_rows_have_steps_and_layers():
    ((rows, _, _),) = run(suite())
    steps = sorted({r["step"] for r in rows if r["metric"] == "grad_norm"})
    assert steps == [1, 5, 10, 12]  # step 1, every 5, and the last
    layers = {r["layer"] for r in rows if r["metric"] == "grad_norm" and r["step"] == 1}
    assert layers == {0, 1, 2, 3}  # embeddings, two blocks, head
    sites = {r["site"] for r in rows if r["metric"] == "ln_input_norm" and r["step"] == 0}
    assert sites == {"1.attn", "1.ffn", "2.attn", "2.ffn"}
    assert [v for _, v in series(rows, "model_update")][0] == 0.0  # step 0: theta_0 itself


def test_lr_warmup_is_linear_then_constant():
    spec = TrainSpec(lr=1e-3, warmup=100, steps=300, every=10, batch=1, seq=2, data_seed=0)
    assert lr_at(1, spec) == pytest.approx(1e-5) and lr_at(50, spec) == pytest.approx(5e-4)
    assert lr_at(100, spec) == lr_at(300, spec) == 1e-3


class _NanAfter(nn.LayerNorm):
    """LayerNorm whose output turns NaN from the `start`-th training call on (probe calls do not count)."""

    calls, start = 0, 0

    def forward(self, x):
        if torch.is_grad_enabled():
            type(self).calls += 1
            if type(self).calls > type(self).start:
                return super().forward(x) * float("nan")
        return super().forward(x)


@pytest.fixture
def nan_norm(monkeypatch):
    class NanNorm(registry.Norm):
        name = "nan_after"

        @registry.impl("module", baseline=True)
        def module(self, hidden, *, eps, dtype, device):
            m = _NanAfter(hidden, eps=eps, dtype=dtype, device=device)
            return registry.Built(m, list(m.parameters()), m)

    monkeypatch.setattr(registry.NORMS, "_entries", registry.all_norms())
    registry.register_norm(NanNorm)
    _NanAfter.calls, _NanAfter.start = 0, 2 * 6  # two norms a forward (post, depth 2): NaN from step 7
    yield


def test_forced_nan_is_a_diverged_result_with_its_step(nan_norm):
    ((rows, status, error),) = run(suite(norms='["nan_after"]', placement="post", depth=1))
    assert status == "diverged"
    assert error == "loss not finite at step 7"
    assert [r["value"] for r in rows if r["metric"] == "diverged_step"] == [7.0]
    assert len(series(rows, "loss")) == 7  # stopped at the first diagnostic step after it (10), kept 1..7


def test_a_run_that_learns_nothing_is_stuck():
    ((rows, status, error),) = run(suite(steps=1))
    assert status == "stuck" and "unigram" in error
    values = {r["metric"]: r["value"] for r in rows if r.get("step") is None}
    assert values["final_loss"] >= values["unigram_loss"] - 0.1
    assert values["optimal_loss"] < values["unigram_entropy"]


@pytest.mark.parametrize(
    "params, where",
    [
        ({"depth": 0}, "bench[0].params.depth: 0 must be >= 1"),
        ({"heads": 3}, "bench[0].params.heads: 3 heads do not divide d=16"),
        ({"placement": "postln"}, "bench[0].params.placement: 'postln' is not one of"),
        ({"init": "fixup"}, "bench[0].params.init: 'fixup' is not one of"),
        ({"lr": -1e-3}, "bench[0].params.lr: -0.001 must be > 0"),
    ],
)
def test_bad_input_is_a_validation_error_naming_the_key(params, where):
    with pytest.raises(SuiteError) as info:
        parse_suite(suite(**params))
    assert where in str(info.value)


def test_batchnorm_is_refused_at_the_norms_key():
    with pytest.raises(SuiteError) as info:
        parse_suite(suite(norms='["batchnorm"]'))
    assert "bench[0].norms: batchnorm normalizes over the batch" in str(info.value)


def test_unreadable_corpus_is_one_clear_line(tmp_path):
    with pytest.raises(CorpusError, match=r"^cannot read the corpus in .*found 0 \*\.py files"):
        load_data("stdlib", seed=0, corpus_dir=str(tmp_path))
    with pytest.raises(SuiteError) as info:  # refused by validation, before any case runs
        parse_suite(suite(data="stdlib", corpus_dir=str(tmp_path)))
    (problem,) = info.value.problems
    assert str(problem).startswith("bench[0].params.corpus_dir: cannot read the corpus in ")


def test_markov_entropy_rate_is_exact():
    P = markov.transition_matrix(7)
    pi = markov.stationary(P)
    np.testing.assert_allclose(pi @ P, pi, atol=1e-12)
    seq = markov.sample_chains(P, pi, 64, 4096, np.random.default_rng(0))
    pairs = np.zeros_like(P)
    np.add.at(pairs, (seq[:, :-1].ravel(), seq[:, 1:].ravel()), 1)
    cond = pairs / pairs.sum(1, keepdims=True)
    empirical = -(pairs / pairs.sum() * np.log(np.where(pairs > 0, cond, 1.0))).sum()
    assert empirical == pytest.approx(markov.entropy_rate(P, pi), abs=0.01)
    assert markov.entropy_rate(P, pi) < -(pi * np.log(pi)).sum()


def test_windows_are_shifted_by_one():
    rows = torch.arange(100)[None, :]
    x, y = sample_windows(rows, 3, 10, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (3, 10) and torch.equal(y, x + 1)


def test_stdlib_corpus_is_recorded_by_hash():
    data = load_data("stdlib", seed=0)
    assert data.info["files"] > 10 and len(data.info["sha256"]) == 64
    assert 2.0 < data.unigram_entropy < 5.0 and data.held_out.numel() > 10_000
