"""Two measurements of σ_max(J) for a function f of one input (a row, or a BatchNorm batch).

Details: docs/methodology.md, "Jacobian bounds"."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.func import jacrev, jvp, vjp, vmap

_warm = False


def warm_up() -> None:
    """torch.func's first jacrev/jvp/vjp in a process costs ~1-2 s of one-off set-up; pay it on a 2-element
    function so that it lands in no input's time."""
    global _warm
    if not _warm:
        x = torch.ones(2, dtype=torch.float64)
        with (
            warnings.catch_warnings()
        ):  # torch's jvp decompositions still call the deprecated torch.jit.script
            warnings.simplefilter("ignore", DeprecationWarning)
            jacrev(torch.sin)(x)
            vmap(lambda v: jvp(lambda z: torch.nn.functional.layer_norm(z, (2,)), (v,), (v,))[1])(x[None])
            vjp(vmap(torch.sin), x[None])[1](x[None])
        _warm = True


@dataclass
class Measured:
    """Per input: the σ_max estimate, Lanczos iterations (0 for exact), convergence, seconds."""

    sigma: list[float]
    iterations: list[int]
    converged: list[bool]
    seconds: list[float]


def _require_finite(t: torch.Tensor, what: str) -> None:
    if not bool(torch.isfinite(t).all()):
        raise FloatingPointError(
            f"non-finite {what} (at eps = 0 an input whose variance is zero, or underflows the dtype, "
            "makes J 0/0)"
        )


def dense_jacobian(f: Callable, x: torch.Tensor) -> torch.Tensor:
    """J as a (D, D) matrix, D = x.numel() (every norm maps its input to an output of the same shape)."""
    J = jacrev(f)(x).reshape(x.numel(), x.numel())
    _require_finite(J, "Jacobian")
    return J


def exact(f: Callable, xs: torch.Tensor, on_jacobian: Callable | None = None) -> Measured:
    """One input at a time (the dense Jacobians of a whole case need not fit in memory together).
    on_jacobian(k, J, sigma) sees each dense Jacobian after it is timed (BatchNorm train's structure)."""
    out = Measured([], [], [], [])
    for k in range(
        xs.shape[0]
    ):  # torch.func ignores an outer no_grad; it only stops graphs to the parameters
        t0 = time.perf_counter()
        with torch.no_grad():
            J = dense_jacobian(f, xs[k])
            sigma = float(torch.linalg.svdvals(J)[0])
        out.seconds.append(time.perf_counter() - t0)
        out.sigma.append(sigma)
        out.iterations.append(0)
        out.converged.append(True)
        if on_jacobian is not None:
            on_jacobian(k, J, sigma)
    return out


def matrix_free(
    f: Callable, xs: torch.Tensor, *, tol: float, max_iters: int, seed: int, operator: Callable | None = None
) -> Measured:
    """σ_max of J(x_k) for every input at once. operator(F, xs) -> (J, Jᵀ) may replace the plain
    Jacobian products (BatchNorm train's coupling measures J minus its per-sample blocks)."""
    warm_up()
    t0 = time.perf_counter()
    F = vmap(f)
    shape = xs.shape
    with torch.no_grad():
        J, Jt = (operator or linear_maps)(F, xs)

        def normal(v: torch.Tensor) -> torch.Tensor:  # JᵀJ v, flat (n, D) in and out
            return Jt(J(v.reshape(shape))).reshape(v.shape)

        theta, iters, conv = lanczos_top_eigenvalue(
            normal, shape[0], xs[0].numel(), xs.dtype, xs.device, tol=tol, max_iters=max_iters, seed=seed
        )
    _require_finite(theta, "Lanczos estimate")
    per_input = (time.perf_counter() - t0) / shape[0]
    sigma = theta.clamp(min=0).sqrt().tolist()
    return Measured(sigma, iters, conv, [per_input] * shape[0])


def linear_maps(F: Callable, xs: torch.Tensor) -> tuple[Callable, Callable]:
    """v -> J v (a jvp) and u -> Jᵀ u (the pull-back of one vjp, reused every iteration)."""
    _, pull = vjp(F, xs)
    return (lambda v: jvp(F, (xs,), (v,))[1]), (lambda u: pull(u)[0])


def cross_sample_maps(F: Callable, xs: torch.Tensor) -> tuple[Callable, Callable]:
    """J − D and its transpose for batch inputs (n, m, d), D = the per-sample blocks ∂y_i/∂x_i (what a
    per-sample Jacobian would see). D v is sample i's response to a tangent on sample i alone: m Jacobian
    products, one per sample, looped so the memory stays that of one product."""
    J, Jt = linear_maps(F, xs)
    m = xs.shape[1]

    def without_own_block(op):
        def apply(v):
            own = torch.zeros_like(v)
            for i in range(m):
                t = torch.zeros_like(v)
                t[:, i] = v[:, i]
                own[:, i] = op(t)[:, i]
            return op(v) - own

        return apply

    return without_own_block(J), without_own_block(Jt)


def lanczos_top_eigenvalue(
    apply: Callable, n: int, dim: int, dtype, device, *, tol: float, max_iters: int, seed: int
) -> tuple[torch.Tensor, list[int], list[bool]]:
    """Top eigenvalue of n symmetric PSD operators at once (apply: (n, dim) -> (n, dim)). Returns the
    estimates (float64), the iteration at which each converged (max_iters if never) and the flags."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(n, dim, generator=g, dtype=torch.float64).to(dtype=dtype, device=device)
    q = q / q.norm(dim=1, keepdim=True)
    basis = torch.empty(n, min(32, max_iters + 1), dim, dtype=dtype, device=device)  # grows by doubling
    basis[:, 0] = q
    alphas, betas = [], []
    q_prev, b_prev = torch.zeros_like(q), torch.zeros(n, dtype=dtype, device=device)
    estimate = torch.zeros(n, dtype=torch.float64)
    iterations, done = [max_iters] * n, [False] * n
    for k in range(1, max_iters + 1):
        w = apply(q)
        a = (w * q).sum(1)
        w = w - a[:, None] * q - b_prev[:, None] * q_prev
        Q = basis[:, :k]  # full re-orthogonalisation against every basis vector, twice ("twice is enough")
        for _ in range(2):
            w = w - torch.einsum("nkd,nk->nd", Q, torch.einsum("nkd,nd->nk", Q, w))
        b = w.norm(dim=1)
        alphas.append(a.double().cpu())
        betas.append(b.double().cpu())
        T = torch.diag_embed(torch.stack(alphas, 1))
        if k > 1:
            off = torch.diag_embed(torch.stack(betas[:-1], 1), offset=1)
            T = T + off + off.transpose(1, 2)
        _require_finite(T, "Jacobian product")  # a NaN from J would reach eigh as a convergence error
        evals, evecs = torch.linalg.eigh(T)
        top, resid = evals[:, -1], betas[-1] * evecs[:, -1, -1].abs()
        for i in range(n):
            if not done[i]:
                estimate[i] = top[i]
                if resid[i] <= 2 * tol * top[i].abs() or k >= dim:  # k = dim: the Krylov space is everything
                    done[i], iterations[i] = True, k
        if all(done):
            break
        q_prev, b_prev = q, b
        safe = torch.where(b > 0, b, torch.ones_like(b))
        q = torch.where((b > 0)[:, None], w / safe[:, None], torch.zeros_like(w))
        if k == basis.shape[1]:
            basis = torch.cat([basis, torch.empty_like(basis)[:, : min(k, max_iters + 1 - k)]], 1)
        basis[:, k] = q
    return estimate, iterations, done


def batch_structure(J: torch.Tensor, m: int, d: int, sigma: float) -> dict[str, float | torch.Tensor]:
    """From BatchNorm train's dense Jacobian ((m·d) × (m·d), index = sample·d + channel): the largest
    cross-channel entry (0 if J is block-diagonal over channels), σ_max of each channel's m×m block, and
    the cross-sample coupling: ‖J − D‖₂/‖J‖₂ and max|entry of J − D| / max|entry of D|, D = J's per-sample
    (d×d) diagonal blocks, the part a per-sample Jacobian would see."""
    Jb = J.reshape(m, d, m, d)
    same_channel = torch.eye(d, dtype=torch.bool, device=J.device)[None, :, None, :]
    same_sample = torch.eye(m, dtype=torch.bool, device=J.device)[:, None, :, None]
    blocks = torch.diagonal(Jb, dim1=1, dim2=3).permute(2, 0, 1)  # (d, m, m): J[i, c, j, c]
    cross = Jb.masked_fill(same_sample, 0).reshape(m * d, m * d)
    own = Jb.masked_fill(~same_sample, 0)
    return {
        "cross_channel_max": float(Jb.masked_fill(same_channel, 0).abs().max()),
        "channel_sigma": torch.linalg.svdvals(blocks)[:, 0].double().cpu(),
        "coupling": float(torch.linalg.svdvals(cross)[0] / sigma) if sigma > 0 else 0.0,
        "coupling_entry": float(cross.abs().max() / own.abs().max()) if own.abs().max() > 0 else 0.0,
    }
