"""The closed forms of σ_max(J) match float64 dense Jacobians (torch.autograd.functional.jacobian + SVD,
independent of the bench's torch.func path) to 1e-6 relative, including the d=1, d=2, constant-row, m=2
and gain cases, and the non-zero-mean case exceeds Xiong's √d/‖x‖."""

import math

import pytest
import torch
from _jacobian_support import one_thread  # noqa: F401  (autouse fixture)

from normbench.benches._jacobian import predictions as cf
from normbench.benches._jacobian.inputs import make_inputs
from normbench.norms.batchnorm import jacobian_sigma_max_eval as batchnorm_eval
from normbench.norms.batchnorm import jacobian_sigma_max_train as batchnorm_train
from normbench.norms.dyt import jacobian_sigma_max as dyt
from normbench.norms.layernorm import jacobian_sigma_max as layernorm
from normbench.norms.rmsnorm import jacobian_sigma_max as rmsnorm

F64 = torch.float64


EPS = 1e-5


def sigma_max(f, x):
    """Largest singular value of the Jacobian of f at x, by plain autograd and a dense SVD."""
    J = torch.autograd.functional.jacobian(f, x).reshape(x.numel(), x.numel())
    return torch.linalg.svdvals(J)[0].item()


def rows(d, n=3, mean=0.0, scale=1.0, dist="gaussian", seed=0):
    return make_inputs(dist, n, d, mean=mean, scale=scale, seed=seed)


def check(f, xs, closed, rtol=1e-6):
    for k in range(xs.shape[0]):
        measured = sigma_max(f, xs[k])
        assert measured == pytest.approx(
            float(closed.value[k]), rel=rtol, abs=0 if closed.value[k] else 1e-300
        )


def layer_norm(d, gamma=None):
    w = torch.ones(d, dtype=F64) if gamma is None else gamma
    return lambda x: torch.nn.functional.layer_norm(x, (d,), w, None, EPS)


@pytest.mark.parametrize("d", [3, 17, 256])
@pytest.mark.parametrize("mean,scale", [(0.0, 1.0), (3.0, 1.0), (0.0, 1e-3), (10.0, 100.0)])
def test_layernorm_d_at_least_3_is_one_over_sqrt_var_plus_eps(d, mean, scale):
    xs = rows(d, mean=mean, scale=scale)
    closed = layernorm(xs, torch.ones(d, dtype=F64), EPS, {})
    assert closed.exact
    check(layer_norm(d), xs, closed)
    # and it is the formula we think it is, written out independently
    v = xs.var(-1, unbiased=False)
    assert torch.allclose(closed.value, 1 / torch.sqrt(v + EPS), rtol=1e-14)


@pytest.mark.parametrize("scale", [1e-4, 3e-3, 1.0])
def test_layernorm_d2_is_eps_over_var_plus_eps_to_the_three_halves(scale):
    xs = rows(2, scale=scale)
    closed = layernorm(xs, torch.ones(2, dtype=F64), EPS, {})
    v = xs.var(-1, unbiased=False)
    assert torch.allclose(closed.value, EPS / (v + EPS) ** 1.5, rtol=1e-14)
    check(layer_norm(2), xs, closed, rtol=1e-6)
    # the d >= 3 formula is wrong here by the factor eps/(var+eps)
    assert (closed.value < 1 / torch.sqrt(v + EPS)).all()


def test_layernorm_d2_with_a_gain_is_exact_rank_one():
    gamma = torch.tensor([0.5, 2.0], dtype=F64)
    xs = rows(2, scale=0.01)
    closed = layernorm(xs, gamma, EPS, {})
    assert closed.exact
    check(layer_norm(2, gamma), xs, closed)


def test_layernorm_d1_is_zero():
    xs = rows(1)
    closed = layernorm(xs, torch.ones(1, dtype=F64), EPS, {})
    assert (closed.value == 0).all()
    for k in range(3):
        assert sigma_max(layer_norm(1), xs[k]) == 0.0


@pytest.mark.parametrize("d", [2, 4, 64])
def test_layernorm_constant_row_is_one_over_sqrt_eps(d):
    xs = rows(d, dist="constant", mean=2.0)
    closed = layernorm(xs, torch.ones(d, dtype=F64), EPS, {})
    assert torch.allclose(closed.value, torch.full((3,), 1 / math.sqrt(EPS), dtype=F64), rtol=1e-9)
    check(layer_norm(d), xs, closed)


def test_layernorm_random_gain_is_a_bound_not_an_equality():
    d = 64
    gamma = 1 + 0.5 * torch.randn(d, generator=torch.Generator().manual_seed(3), dtype=F64)
    xs = rows(d)
    closed = layernorm(xs, gamma, EPS, {})
    assert not closed.exact
    for k in range(3):
        measured = sigma_max(layer_norm(d, gamma), xs[k])
        assert measured <= closed.value[k] * (1 + 1e-12)
        assert measured >= 0.8 * closed.value[k]  # a bound, but not a loose one
    # a gain of constant magnitude (signs flipped) keeps the equality
    signs = torch.where(torch.arange(d) % 2 == 0, 2.0, -2.0).to(F64)
    assert layernorm(xs, signs, EPS, {}).exact
    check(layer_norm(d, signs), xs, layernorm(xs, signs, EPS, {}))


@pytest.mark.parametrize("d", [2, 3, 64])
@pytest.mark.parametrize("mean", [0.0, 3.0])
def test_rmsnorm_d_at_least_2(d, mean):
    xs = rows(d, mean=mean)
    closed = rmsnorm(xs, torch.ones(d, dtype=F64), EPS, {})
    assert torch.allclose(closed.value, 1 / torch.sqrt(xs.pow(2).mean(-1) + EPS), rtol=1e-14)
    check(lambda x: torch.nn.functional.rms_norm(x, (d,), None, EPS), xs, closed)


def test_rmsnorm_d1():
    xs = rows(1, scale=0.01)
    closed = rmsnorm(xs, torch.ones(1, dtype=F64), EPS, {})
    assert torch.allclose(closed.value, EPS / (xs[:, 0] ** 2 + EPS) ** 1.5, rtol=1e-14)
    check(lambda x: torch.nn.functional.rms_norm(x, (1,), None, EPS), xs, closed)


def test_batchnorm_eval_is_diagonal_max_gain_over_running_std():
    d = 8
    m = torch.nn.BatchNorm1d(d, eps=EPS, dtype=F64).eval()
    with torch.no_grad():
        m.weight.copy_(torch.linspace(-3, 2, d))
        m.running_var.copy_(torch.linspace(0.5, 2, d))
    xs = rows(d)
    closed = batchnorm_eval(xs, m.weight.detach(), EPS, {"running_var": m.running_var})
    assert closed.value[0] == pytest.approx(3 / math.sqrt(0.5 + EPS), rel=1e-14)
    check(lambda x: m(x[None])[0], xs, closed)


@pytest.mark.parametrize("m,d", [(3, 1), (8, 5), (16, 3)])
def test_batchnorm_train_full_batch_is_max_channel_gain_over_batch_std(m, d):
    bn = torch.nn.BatchNorm1d(d, eps=EPS, dtype=F64, track_running_stats=False)
    with torch.no_grad():
        bn.weight.copy_(torch.linspace(0.5, 2, d))
    xs = make_inputs("gaussian", 2, d, batch=m, mean=1.0, seed=1)
    closed = batchnorm_train(xs, bn.weight.detach(), EPS, {})
    assert closed.per_channel.shape == (2, d)
    check(bn, xs, closed)
    for c in range(d):  # per channel: |γ_c|/√(batch var_c + ε), the m×m block of channel c alone
        col = xs[0, :, c].clone()

        def channel(z, c=c):
            x = xs[0].clone()
            x[:, c] = z
            return bn(x)[:, c]

        assert sigma_max(channel, col) == pytest.approx(float(closed.per_channel[0, c]), rel=1e-6)


def test_batchnorm_train_two_samples_is_degenerate_like_layernorm_d2():
    bn = torch.nn.BatchNorm1d(3, eps=EPS, dtype=F64, track_running_stats=False)
    xs = make_inputs("gaussian", 2, 3, batch=2, scale=0.01, seed=2)
    closed = batchnorm_train(xs, bn.weight.detach(), EPS, {})
    v = xs.var(-2, unbiased=False)
    assert torch.allclose(closed.per_channel, EPS / (v + EPS) ** 1.5, rtol=1e-14)
    check(bn, xs, closed)


def test_dyt_is_diagonal_gamma_alpha_sech_squared():
    d, alpha = 16, torch.tensor(0.7, dtype=F64)
    gamma = torch.linspace(-1, 2, d, dtype=F64)
    xs = rows(d, scale=2.0)
    closed = dyt(xs, gamma, 0.0, {"alpha": alpha})
    check(lambda x: gamma * torch.tanh(alpha * x), xs, closed)
    assert (closed.value <= gamma.abs().max() * alpha).all()  # bounded whatever ‖x‖ is


def test_non_zero_mean_exceeds_xiongs_bound_by_the_mean_factor():
    """Xiong et al. 2020, Lemma 3 assumes zero-mean input: with mean 3σ, σ_max·‖x‖/√d ≈ √(1 + μ²/var) = √10; the centred bound holds."""
    d = 512
    xs = rows(d, mean=3.0, n=4)
    closed = layernorm(xs, torch.ones(d, dtype=F64), EPS, {})
    bounds = cf.xiong_bounds(xs, torch.ones(d, dtype=F64), "row")
    ratio = closed.value / bounds["xiong"]
    assert (ratio > 2.5).all() and (ratio < 3.7).all()
    assert torch.allclose(
        ratio,
        bounds["inflation"] * torch.sqrt(xs.var(-1, unbiased=False) / (xs.var(-1, unbiased=False) + EPS)),
    )
    assert (closed.value / bounds["centred"] <= 1).all()
    assert sigma_max(layer_norm(d), xs[0]) / bounds["xiong"][0].item() > 2.5


def test_formula_lookup_follows_the_registry():
    assert cf.formula_for("batchnorm", "train").layout == "batch"
    assert cf.formula_for("batchnorm", "eval").layout == "row"
    assert cf.formula_for("layernorm", "composite").compute is layernorm
    assert cf.formula_for("identity", "copy") is None
    from normbench.norms import all_norms

    assert (cf.formula_for("dyt", None) is not None) == ("dyt" in all_norms())
