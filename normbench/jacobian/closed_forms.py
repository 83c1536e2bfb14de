"""Every closed form for σ_max(J) of the normalizers, and the bounds they are compared against, in one
place. Reference: shared/reference/science.md §2 (Xiong et al. 2020, Lemma 3) and §6 (exact Jacobians).

Notation for one row x ∈ ℝ^d: μ = mean(x), y = x − μ1, v = ‖y‖²/d (the *biased* variance torch uses),
s = √(v+ε), ŷ = y/‖y‖, P = I − 11ᵀ/d (centring), γ the gain. Every formula is evaluated in float64 on the
input the norm actually saw (already rounded to the case's dtype), so a float32 case shows the error of
the float32 Jacobian, not of the formula.

A formula returns the predicted σ_max per input and whether it is an equality (`exact`) or only an upper
bound. A norm joins the jacobian bench by adding a Formula to FORMULAS below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # torch is imported where a formula runs: validating a suite reads FORMULAS without it
    import torch


@dataclass(frozen=True)
class Closed:
    value: torch.Tensor  # (n,) float64: σ_max per input (the bound when exact is False)
    exact: bool  # True: an equality; False: an upper bound (LayerNorm/RMSNorm with a non-constant gain)
    per_channel: torch.Tensor | None = None  # (n, d): BatchNorm train, σ_max of each channel's block
    # "general"; "eps-term" where σ_max is the ε-suppressed direction alone (LayerNorm d=2, RMSNorm d=1,
    # BatchNorm train m=2): J's entries are O(1/s) and cancel down to O(ε/s³), so a measured Jacobian carries
    # a relative error of about machine-ε·(v+ε)/ε there; "zero" where J = 0 (LayerNorm d=1).
    regime: str = "general"


@dataclass(frozen=True)
class Formula:
    norm: str
    impl: str | None  # None: every implementation of the norm
    layout: str  # "row": one input is a row of d; "batch": one input is an (m, d) batch (BN train)
    compute: Callable[[torch.Tensor, torch.Tensor, float, dict[str, Any]], Closed]  # (x, γ, ε, extra)
    summary: str
    needs: tuple[str, ...] = ()  # entries of `extra` the formula reads (running_var, alpha)
    # The norm computes statistics of x (mean, x²): those must not overflow the case's dtype. BatchNorm
    # eval (running statistics) and DyT (elementwise tanh) have none.
    input_statistics: bool = True


def _gain_is_constant(gamma: torch.Tensor) -> bool:
    a = gamma.abs()
    return bool(a.max() == a.min())


# -- LayerNorm ---------------------------------------------------------------------------------------
# LN(x) = γ ⊙ y/s. With γ = 1:  J₀ = (1/s)(I − yyᵀ/(d·s²))P = (1/s)[P − (v/(v+ε))·ŷŷᵀ].
# Eigen-structure of J₀: 0 on 1 (mean invariance); (1/s)(1 − v/(v+ε)) = ε/s³ on ŷ (scale invariance,
# broken only by ε); 1/s on the (d−2)-dimensional rest.
#   d ≥ 3: σ_max = 1/s = 1/√(v+ε) exactly (ε/s³ = (1/s)·ε/(v+ε) ≤ 1/s). A constant row (y = 0) gives
#          J₀ = P/√ε and σ_max = 1/√ε, which is the same formula at v = 0.
#   d = 2: the "rest" is empty and P = ŷŷᵀ, so J₀ = (ε/s³)ŷŷᵀ has rank one: σ_max = ε/(v+ε)^{3/2}.
#          The d ≥ 3 formula is wrong here by the factor ε/(v+ε). With a gain, J = diag(γ)J₀ is still rank
#          one: σ_max = (ε/s³)‖diag(γ)ŷ‖ = (ε/s³)·rms(γ) because ŷ = ±(1,−1)/√2. A constant row gives
#          J₀ = P/√ε = (1/√ε)ŵŵᵀ with ŵ = (1,−1)/√2: the same formula at v = 0. All exact.
#   d = 1: y ≡ 0, so LN(x) ≡ β and J = 0.
#   gain γ, d ≥ 3: J = diag(γ)J₀, so σ_max ≤ max|γ|/s, with equality when |γ| is constant (diag(±c) is c
#          times an orthogonal matrix). For a general γ there is no simple closed form: a bound.
def layernorm(x, gamma, eps, extra) -> Closed:
    import torch

    d = x.shape[-1]
    v = x.var(-1, unbiased=False)
    s = torch.sqrt(v + eps)
    if d == 1:
        return Closed(torch.zeros_like(v), True, regime="zero")
    if d == 2:
        return Closed(eps / s**3 * gamma.pow(2).mean().sqrt(), True, regime="eps-term")
    return Closed(gamma.abs().max() / s, _gain_is_constant(gamma))


# -- RMSNorm -----------------------------------------------------------------------------------------
# RMS(x) = γ ⊙ x/r, r = √(‖x‖²/d + ε). With γ = 1: J₀ = (1/r)(I − xxᵀ/(d·r²)); eigenvalues 1/r on x^⊥
# (multiplicity d−1) and (1/r)(1 − ms/(ms+ε)) = ε/r³ on x̂, where ms = ‖x‖²/d.
#   d ≥ 2: σ_max = 1/√(ms+ε) exactly; with ε = 0 this is √d/‖x‖, Xiong's bound with equality (no centring,
#          so the raw norm is the right one). x = 0 gives I/√ε: the same formula.
#   d = 1: J = γ·ε/(x²+ε)^{3/2} (the x^⊥ space is empty).
#   gain: as for LayerNorm, max|γ|/r is exact for constant |γ| and a bound otherwise.
def rmsnorm(x, gamma, eps, extra) -> Closed:
    import torch

    d = x.shape[-1]
    ms = x.pow(2).mean(-1)
    r = torch.sqrt(ms + eps)
    if d == 1:
        return Closed(gamma.abs()[0] * eps / r**3, True, regime="eps-term")
    return Closed(gamma.abs().max() / r, _gain_is_constant(gamma))


# -- BatchNorm, eval mode ----------------------------------------------------------------------------
# y_c = γ_c (x_c − running_mean_c)/√(running_var_c + ε) + β_c: an elementwise affine map, so J is
# diagonal and σ_max = max_c |γ_c|/√(running_var_c + ε), whatever the input.
def batchnorm_eval(x, gamma, eps, extra) -> Closed:
    import torch

    value = (gamma.abs() / torch.sqrt(extra["running_var"] + eps)).max()
    return Closed(value.expand(x.shape[0]).clone(), True)


# -- BatchNorm, train mode ---------------------------------------------------------------------------
# The statistics are those of the batch, so channel c's output couples all m samples: for the column
# x_c ∈ ℝ^m, J_c = (γ_c/s_c)[P_m − (v_c/(v_c+ε))·ŷ_cŷ_cᵀ], LayerNorm's algebra with the sample axis in place
# of the feature axis (v_c the biased batch variance). The full (m·d)×(m·d) Jacobian is block-diagonal
# over channels, so σ_max(J) = max_c σ_max(J_c), with
#   m ≥ 3: σ_max(J_c) = |γ_c|/√(v_c+ε) exactly (γ_c is one scalar per block, so no bound is needed);
#   m = 2: σ_max(J_c) = |γ_c|·ε/(v_c+ε)^{3/2} (the d = 2 degeneracy of LayerNorm);
#   m = 1: PyTorch refuses ("Expected more than 1 value per channel"); the bench requires batch ≥ 2.
def batchnorm_train(x, gamma, eps, extra) -> Closed:
    import torch

    m = x.shape[-2]
    v = x.var(-2, unbiased=False)  # (n, d): per channel, over the batch
    s = torch.sqrt(v + eps)
    per_channel = gamma.abs() * (eps / s**3 if m == 2 else 1 / s)
    return Closed(per_channel.max(-1).values, True, per_channel, "eps-term" if m == 2 else "general")


# -- DyT (Zhu et al. 2025) ---------------------------------------------------------------------------
# DyT(x) = γ ⊙ tanh(αx) + β with α a learnable scalar: elementwise, so J = diag(γ_i·α·(1 − tanh²(αx_i)))
# and σ_max = max_i |γ_i·α|·(1 − tanh²(αx_i)) ≤ max|γ|·|α|, independent of ‖x‖ (unlike LayerNorm).
def dyt(x, gamma, eps, extra) -> Closed:
    import torch

    alpha = extra["alpha"]
    return Closed((gamma * alpha * (1 - torch.tanh(alpha * x) ** 2)).abs().max(-1).values, True)


FORMULAS = [
    Formula(
        "layernorm",
        None,
        "row",
        layernorm,
        "d≥3: max|γ|/√(var+ε) (exact for constant |γ|); d=2: ε·rms(γ)/(var+ε)^1.5; d=1: 0",
    ),
    Formula(
        "rmsnorm",
        None,
        "row",
        rmsnorm,
        "d≥2: max|γ|/√(mean(x²)+ε) (exact for constant |γ|); d=1: |γ|ε/(x²+ε)^1.5",
    ),
    Formula(
        "batchnorm",
        "eval",
        "row",
        batchnorm_eval,
        "max_c |γ_c|/√(running_var_c+ε), diagonal",
        ("running_var",),
        input_statistics=False,
    ),
    Formula(
        "batchnorm",
        "train",
        "batch",
        batchnorm_train,
        "max_c |γ_c|/√(batch_var_c+ε) for m≥3; |γ_c|ε/(var_c+ε)^1.5 for m=2",
    ),
    Formula("dyt", None, "row", dyt, "max_i |γ_i α|(1−tanh²(αx_i))", ("alpha",), input_statistics=False),
]


def formula_for(norm: str, impl: str | None) -> Formula | None:
    """The formula for (norm, impl), or None. A formula counts only while its norm is registered (DyT
    joins the bench when normbench/norms/dyt.py exists)."""
    from normbench.norms import all_norms

    if norm not in all_norms():
        return None
    return next((f for f in FORMULAS if f.norm == norm and f.impl in (impl, None)), None)


# -- The bounds the measurements are compared against (science.md §2, Lemma 3) -----------------------
# Xiong's Lemma 3: ‖J_LN(x)‖ = O(√d/‖x‖) for γ = 1. Its proof bounds by √d/‖y‖ (the centred norm) and then
# writes ‖x‖, which holds only for a near-zero mean: ‖x‖/‖y‖ = √(1 + μ²/v) is unbounded. Both are
# computed, taken with constant 1 (the zero-mean equality case), and scaled by max|γ| so they remain upper
# bounds candidates with a gain (‖diag(γ)J₀‖ ≤ max|γ|·‖J₀‖). For BatchNorm train the normalized axis is the
# batch: the bound of channel c is |γ_c|·√m/‖x_c‖ and the batch's is the maximum over channels.
def xiong_bounds(x: torch.Tensor, gamma: torch.Tensor, layout: str) -> dict[str, torch.Tensor]:
    """Per input: Xiong's √d/‖x‖, the centred √d/‖x − mean‖, and inflation = ‖x‖/‖x − mean‖."""
    if layout == "row":
        n = x.shape[-1]
        norm = x.norm(dim=-1)
        centred = (x - x.mean(-1, keepdim=True)).norm(dim=-1)
        g = gamma.abs().max()
        return {"xiong": g * n**0.5 / norm, "centred": g * n**0.5 / centred, "inflation": norm / centred}
    m = x.shape[-2]
    norm = x.norm(dim=-2)  # (n, d): per channel column
    centred = (x - x.mean(-2, keepdim=True)).norm(dim=-2)
    g = gamma.abs()
    return {
        "xiong": (g * m**0.5 / norm).max(-1).values,
        "centred": (g * m**0.5 / centred).max(-1).values,
        "inflation": (norm / centred).max(-1).values,
    }
