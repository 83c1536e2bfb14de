"""The float64 references of every norm agree with independent NumPy formulas, with closed forms, and
(their gradients) with finite differences."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from normbench.norms import get_norm

EPS = 1e-5


def _params(norm, hidden, seed=0):
    built = norm.build(
        norm.baseline if norm.name != "batchnorm" else "eval",
        hidden,
        eps=EPS,
        dtype=torch.float64,
        device="cpu",
    )
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for t in built.params:
            t.add_(0.3 * torch.randn(t.shape, generator=g, dtype=torch.float64))
    return built, [t.detach() for t in built.params]


def _x(tokens=6, hidden=10, seed=1):
    return (
        torch.randn(tokens, hidden, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 2
        + 0.7
    )


def test_layernorm_reference_matches_numpy():
    norm = get_norm("layernorm")
    built, (w, b) = _params(norm, 10)
    x = _x()
    a = x.numpy()
    expected = (a - a.mean(1, keepdims=True)) / np.sqrt(a.var(1, keepdims=True) + EPS) * w.numpy() + b.numpy()
    got = norm.exact("module", x, [w, b], built, eps=EPS).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_layernorm_reference_closed_form_unit_affine():
    """gamma = 1, beta = 0: each row has mean 0 and variance v / (v + eps) exactly."""
    norm = get_norm("layernorm")
    x = _x(4, 64)
    y = norm.exact(
        "module",
        x,
        [torch.ones(64, dtype=torch.float64), torch.zeros(64, dtype=torch.float64)],
        None,
        eps=EPS,
    )
    v = x.var(1, unbiased=False)
    torch.testing.assert_close(y.mean(1), torch.zeros(4, dtype=torch.float64), atol=1e-12, rtol=0)
    torch.testing.assert_close(y.var(1, unbiased=False), v / (v + EPS), atol=1e-12, rtol=1e-12)


def test_rmsnorm_reference_matches_numpy():
    norm = get_norm("rmsnorm")
    built, (w,) = _params(norm, 10)
    x = _x()
    a = x.numpy()
    expected = a / np.sqrt(np.mean(a**2, axis=1, keepdims=True) + EPS) * w.numpy()
    np.testing.assert_allclose(norm.exact("module", x, [w], built, eps=EPS).numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("impl", ["train", "eval", "train_compiled", "eval_compiled"])
def test_batchnorm_reference_matches_numpy(impl):
    norm = get_norm("batchnorm")
    built, (w, b) = _params(norm, 10)
    x = _x()
    a = x.numpy()
    if impl.startswith("train"):
        mean, var = a.mean(0), a.var(0)
    else:
        mean, var = built.module.running_mean.numpy(), built.module.running_var.numpy()
    expected = (a - mean) / np.sqrt(var + EPS) * w.numpy() + b.numpy()
    np.testing.assert_allclose(norm.exact(impl, x, [w, b], built, eps=EPS).numpy(), expected, rtol=1e-12)


def test_dyt_reference_matches_numpy():
    norm = get_norm("dyt")
    built, (alpha, w, b) = _params(norm, 10)
    x = _x()
    expected = w.numpy() * np.tanh(alpha.numpy() * x.numpy()) + b.numpy()
    np.testing.assert_allclose(
        norm.exact("module", x, [alpha, w, b], built, eps=EPS).numpy(), expected, rtol=1e-12
    )


@pytest.mark.parametrize(
    "name, impl",
    [
        ("layernorm", "module"),
        ("rmsnorm", "module"),
        ("batchnorm", "train"),
        ("batchnorm", "eval"),
        ("dyt", "module"),
    ],
)
def test_reference_gradients_match_finite_differences(name, impl):
    """The accuracy bench takes reference gradients from float64 autograd of the formula: check them."""
    norm = get_norm(name)
    built, params = _params(norm, 5)
    x = _x(4, 5).requires_grad_(True)
    params = [p.clone().requires_grad_(True) for p in params]
    assert torch.autograd.gradcheck(
        lambda x, *ps: norm.exact(impl, x, list(ps), built, eps=EPS), (x, *params)
    )


def test_dyt_module_names_and_init():
    """The Jacobian bench reads DyT's parameters by name: alpha (one scalar, 0.5), weight, bias."""
    m = get_norm("dyt").build("module", 8, eps=EPS, dtype=torch.float32, device="cpu").module
    assert dict(m.named_parameters()).keys() == {"alpha", "weight", "bias"}
    assert m.alpha.numel() == 1 and float(m.alpha.detach()) == 0.5
    x = torch.randn(3, 8)
    torch.testing.assert_close(m(x), torch.tanh(0.5 * x))


@pytest.mark.parametrize("name", ["layernorm", "rmsnorm", "batchnorm", "dyt"])
def test_eager_implementations_agree_with_reference_in_float64(name):
    """Every non-compiled implementation, run in float64, is the reference to rounding (the composite
    forms compute in float32 by design, so to float32 rounding): the references judge the same function
    the implementations compute."""
    norm = get_norm(name)
    x = _x(8, 16)
    for impl in norm.impls:
        if "compiled" in impl or norm.impls[impl].requires:
            continue
        built = norm.build(impl, 16, eps=EPS, dtype=torch.float64, device="cpu")
        with torch.no_grad():
            y = built.fn(x)
        ref = norm.exact(impl, x, [p.detach() for p in built.params], built, eps=EPS)
        tol = 1e-5 if impl == "composite" else 1e-10
        torch.testing.assert_close(y, ref, rtol=tol, atol=tol, msg=f"{name}:{impl}")
