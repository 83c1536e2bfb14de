"""The matrix-free Lanczos estimate of σ_max agrees with the dense SVD (float64 and float32, plain and
random gains, BatchNorm's full-batch and cross-sample operators), and a run that does not converge is
flagged with its last estimate."""

import pytest
import torch
from _jacobian_support import one_thread  # noqa: F401  (autouse fixture)

from normbench.benches._jacobian import measure
from normbench.benches._jacobian.inputs import make_inputs

F64 = torch.float64


def layer_norm(d, gamma):
    return lambda x: torch.nn.functional.layer_norm(x[None], (d,), gamma, None, 1e-5)[0]


@pytest.mark.parametrize("d", [1, 2, 3, 64, 300])
@pytest.mark.parametrize("gain", ["ones", "random"])
def test_matrix_free_matches_exact_for_layernorm(d, gain):
    gamma = (
        torch.ones(d, dtype=F64)
        if gain == "ones"
        else 1 + 0.5 * torch.randn(d, generator=torch.Generator().manual_seed(1), dtype=F64)
    )
    xs = make_inputs("gaussian", 3, d, mean=1.0, seed=4)
    exact = measure.exact(layer_norm(d, gamma), xs)
    free = measure.matrix_free(layer_norm(d, gamma), xs, tol=1e-9, max_iters=400, seed=0)
    assert all(free.converged)
    assert free.sigma == pytest.approx(exact.sigma, rel=1e-7, abs=1e-12)
    assert all(i >= 1 for i in free.iterations) and all(s > 0 for s in free.seconds)


@pytest.mark.parametrize("norm", ["rmsnorm", "batchnorm_eval"])
def test_matrix_free_matches_exact_for_rmsnorm_and_batchnorm_eval(norm):
    d = 128
    if norm == "rmsnorm":

        def f(x):
            return torch.nn.functional.rms_norm(x, (d,), None, 1e-5)
    else:
        bn = torch.nn.BatchNorm1d(d, dtype=F64).eval()
        with torch.no_grad():
            bn.running_var.uniform_(0.5, 2.0, generator=torch.Generator().manual_seed(0))

        def f(x):
            return bn(x[None])[0]

    xs = make_inputs("student_t", 2, d, seed=5)
    exact = measure.exact(f, xs)
    free = measure.matrix_free(f, xs, tol=1e-10, max_iters=d, seed=1)
    assert free.sigma == pytest.approx(exact.sigma, rel=1e-8)


def test_batchnorm_train_full_batch_and_coupling_match_the_dense_jacobian():
    m, d = 6, 4
    bn = torch.nn.BatchNorm1d(d, dtype=F64, track_running_stats=False)
    xs = make_inputs("gaussian", 2, d, batch=m, mean=2.0, seed=6)
    dense = {}
    exact = measure.exact(
        bn, xs, on_jacobian=lambda k, J, s: dense.setdefault(k, measure.batch_structure(J, m, d, s))
    )
    free = measure.matrix_free(bn, xs, tol=1e-10, max_iters=200, seed=2)
    assert free.sigma == pytest.approx(exact.sigma, rel=1e-8)
    coupling = measure.matrix_free(
        bn, xs, tol=1e-10, max_iters=200, seed=2, operator=measure.cross_sample_maps
    )
    for k in range(2):
        assert coupling.sigma[k] / free.sigma[k] == pytest.approx(dense[k]["coupling"], rel=1e-7)
        assert dense[k]["cross_channel_max"] == 0.0  # block-diagonal over channels, exactly
        assert 0 < dense[k]["coupling_entry"] < 1


def test_cross_sample_coupling_by_hand():
    """‖J − D‖ from an independently built dense J: zero every sample's own d×d block and take the SVD."""
    m, d = 4, 2
    bn = torch.nn.BatchNorm1d(d, dtype=F64, track_running_stats=False)
    x = make_inputs("gaussian", 1, d, batch=m, seed=7)
    J = torch.autograd.functional.jacobian(bn, x[0]).reshape(m * d, m * d).clone()
    sigma = torch.linalg.svdvals(J)[0].item()
    for i in range(m):
        J[i * d : (i + 1) * d, i * d : (i + 1) * d] = 0
    want = torch.linalg.svdvals(J)[0].item() / sigma
    got = measure.batch_structure(
        torch.autograd.functional.jacobian(bn, x[0]).reshape(m * d, m * d), m, d, sigma
    )
    assert got["coupling"] == pytest.approx(want, rel=1e-12)


def test_float32_matrix_free_is_within_float32_precision():
    d = 256
    gamma = torch.ones(d, dtype=torch.float32)
    xs = make_inputs("gaussian", 2, d, dtype=torch.float32, seed=8)
    free = measure.matrix_free(layer_norm(d, gamma), xs, tol=1e-5, max_iters=100, seed=0)
    truth = 1 / torch.sqrt(xs.double().var(-1, unbiased=False) + 1e-5)
    assert all(free.converged)
    assert free.sigma == pytest.approx(truth.tolist(), rel=1e-5)


def test_lanczos_on_a_known_spectrum_and_non_convergence_is_flagged():
    diag = torch.linspace(0.1, 4.0, 500, dtype=F64).repeat(2, 1)  # dense spectrum: hard for Krylov

    def apply(v):
        return diag * v

    est, iters, conv = measure.lanczos_top_eigenvalue(
        apply, 2, 500, F64, "cpu", tol=1e-10, max_iters=3, seed=0
    )
    assert conv == [False, False] and iters == [3, 3]
    assert (est < 4.0).all() and (est > 2.0).all()  # the last estimate is kept, below the true top
    est, iters, conv = measure.lanczos_top_eigenvalue(
        apply, 2, 500, F64, "cpu", tol=1e-8, max_iters=500, seed=0
    )
    assert all(conv) and est.tolist() == pytest.approx([4.0, 4.0], rel=1e-7)


def test_zero_jacobian_converges_to_zero():
    xs = make_inputs("gaussian", 2, 1, seed=0)
    free = measure.matrix_free(layer_norm(1, torch.ones(1, dtype=F64)), xs, tol=1e-6, max_iters=10, seed=0)
    assert free.sigma == [0.0, 0.0] and all(free.converged)


def test_non_finite_jacobian_raises():
    xs = make_inputs("constant", 1, 4, seed=0)  # zero variance

    def f(x):
        return torch.nn.functional.layer_norm(x[None], (4,), eps=0.0)[0]

    with pytest.raises(FloatingPointError, match="non-finite"):
        measure.exact(f, xs)
