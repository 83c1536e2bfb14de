"""PowerNorm (norms/powernorm.py) follows the paper's Algorithm 1: forward, approximate backward and both
running statistics (ψ², ν) match an independent float64 implementation over several steps; eval is the
running-ψ affine map, its fold into a Linear is exact, its Jacobian closed form matches jacrev; and the
latency, jacobian and block benches run it."""

from __future__ import annotations

import pytest
import torch
from latency_helpers import per_tensor, run

from normbench.norms import get_norm
from normbench.norms.powernorm import ALPHA, module_class

F64 = torch.float64
EPS = 1e-5


class Algorithm1:
    """Shen et al. 2020, Algorithm 1, written from the paper in float64 (no torch autograd)."""

    def __init__(self, d, alpha=ALPHA, eps=EPS):
        self.psi2 = torch.ones(d, dtype=F64)  # ψ²_0
        self.nu = torch.zeros(d, dtype=F64)  # ν_0
        self.alpha, self.eps = alpha, eps

    def step(self, x, gamma, beta, dy):
        """One training iteration: (Y, dL/dX, dL/dγ, dL/dβ); updates ψ² and ν."""
        a = self.alpha
        psi = torch.sqrt(self.psi2 + self.eps)
        x_hat = x / psi
        y = gamma * x_hat + beta
        self.psi2 = a * self.psi2 + (1 - a) * (x**2).mean(0)
        d_xhat = gamma * dy
        dx = (d_xhat - self.nu * x_hat) / psi
        big_gamma = (x_hat * x_hat).mean(0)
        big_lambda = (x_hat * d_xhat).mean(0)
        self.nu = self.nu * (1 - (1 - a) * big_gamma) + (1 - a) * big_lambda
        return y, dx, (dy * x_hat).sum(0), dy.sum(0)


@pytest.mark.parametrize("dtype,tol", [(F64, 1e-12), (torch.float32, 2e-5)])
def test_train_steps_match_algorithm_1(dtype, tol):
    d, batch = 6, 10
    g = torch.Generator().manual_seed(0)
    m = module_class()(d, EPS, dtype=dtype).train()
    with torch.no_grad():
        m.weight.copy_(1 + 0.3 * torch.randn(d, generator=g))
        m.bias.copy_(0.2 * torch.randn(d, generator=g))
    ref = Algorithm1(d)
    for step in range(5):
        x = (1.5 + step) * torch.randn(batch, d, generator=g, dtype=F64) + 0.3
        dy = torch.randn(batch, d, generator=g, dtype=F64)
        xg = x.to(dtype).requires_grad_(True)
        m.weight.grad = m.bias.grad = None
        y = m(xg)
        y.backward(dy.to(dtype))
        want = ref.step(x, m.weight.detach().double(), m.bias.detach().double(), dy)
        got = (y, xg.grad, m.weight.grad, m.bias.grad)
        for name, a, b in zip(("y", "dx", "dgamma", "dbeta"), got, want, strict=True):
            torch.testing.assert_close(a.double(), b, rtol=tol, atol=tol, msg=f"{name} at step {step}")
        torch.testing.assert_close(m.running_phi.double(), ref.psi2, rtol=tol, atol=tol)
        torch.testing.assert_close(m.running_nu.double(), ref.nu, rtol=tol, atol=tol)
    assert ref.nu.abs().min() > 0  # ν moved, so the correction term was exercised


def test_module_takes_batch_time_hidden():
    m = module_class()(4, EPS, dtype=F64).train()
    x = torch.randn(3, 5, 4, dtype=F64)
    y = m(x)
    assert y.shape == x.shape
    torch.testing.assert_close(m.running_phi, ALPHA + (1 - ALPHA) * (x**2).reshape(-1, 4).mean(0))


def test_eval_is_the_running_affine_map_and_folds():
    norm = get_norm("powernorm")
    built = norm.build("eval", 8, eps=EPS, dtype=F64, device="cpu")
    m = built.module
    assert not m.training and not torch.allclose(m.running_phi, torch.ones(8, dtype=F64))
    x = torch.randn(16, 8, dtype=F64)
    before = m.running_phi.clone()
    want = m.weight * x / torch.sqrt(m.running_phi + EPS) + m.bias
    torch.testing.assert_close(m(x), want)
    assert torch.equal(m.running_phi, before)  # eval never moves ψ²
    w, b = torch.randn(8, 8, dtype=F64), torch.randn(8, dtype=F64)
    w2, b2 = norm.fold_into_linear(built, w, b, eps=EPS)
    torch.testing.assert_close(x @ w2.T + b2, m(x @ w.T + b), rtol=1e-12, atol=1e-12)


def test_jacobian_closed_form_matches_jacrev():
    norm = get_norm("powernorm")
    built = norm.build("eval", 7, eps=EPS, dtype=F64, device="cpu")
    with torch.no_grad():
        built.module.weight.copy_(torch.linspace(-2, 1.5, 7, dtype=F64))
    formula = norm.jacobian_closed_form("eval")
    assert norm.jacobian_closed_form("train") is None
    xs = torch.randn(3, 7, dtype=F64)
    extra = {"running_phi": built.module.running_phi.detach()}
    closed = formula.compute(xs, built.module.weight.detach(), EPS, extra)
    for k in range(3):
        J = torch.func.jacrev(lambda r: built.module(r.unsqueeze(0)).squeeze(0))(xs[k])
        assert torch.linalg.svdvals(J)[0].item() == pytest.approx(float(closed.value[k]), rel=1e-12)


@pytest.mark.parametrize("impl,mode", [("train", "fwd+bwd"), ("train", "fwd"), ("eval", "fwd+bwd")])
def test_latency_rows_with_accuracy(impl, mode):
    m, rows, status, error = run("latency", "powernorm", impl, tokens=64, d=32, mode=mode)
    assert status == "ok", error
    assert m["time_median"] > 0 and m["gbps"] > 0
    errs = per_tensor(rows, "err_abs")
    assert set(errs) == ({"y"} if mode == "fwd" else {"y", "dx", "dweight", "dbias"})
    assert max(errs.values()) < 1e-4  # fp32 against the float64 equations
    assert "recheck_err_abs" in m and "recheck_max_change" not in m  # stateful: re-judged vs float64


def test_jacobian_and_block_benches_run():
    m, rows, status, error = run("jacobian", "powernorm", "eval", d=16, gain="random", inputs=2)
    assert status == "ok", error
    assert max(abs(r["value"]) for r in rows if r["metric"] == "rel_err") < 1e-10
    for block in ("powernorm", "powernorm_folded"):
        m, rows, status, error = run("block", None, None, block=block, tokens=32, d=32)
        assert status == "ok", error
        assert per_tensor(rows, "err_abs")["y"] < 1e-4
    assert 0 <= m["fold_max_diff"] <= m["fold_tolerance"]
