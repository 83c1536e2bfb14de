"""What the Jacobian bench compares σ_max with: each norm's declared closed form, and Xiong's bounds.
References: Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture", Lemma 3; the exact
Jacobians follow from differentiating y = (x - mean) / sqrt(var + eps) (and RMSNorm's y = x / rms) directly.

Details: docs/methodology.md, "Jacobian bounds"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from normbench.norms import all_norms
from normbench.norms.closed_form import Closed, Formula, gain_is_constant

if TYPE_CHECKING:  # torch is imported where a formula runs: validating a suite asks for formulas without it
    import torch

__all__ = ["Closed", "Formula", "formula_for", "formulas", "gain_is_constant", "xiong_bounds"]


def formula_for(norm: str, impl: str | None) -> Formula | None:
    """The closed form the norm declares for (norm, impl) (impl None: its baseline), or None (unknown norm,
    or a norm without one)."""
    norms = all_norms()
    if norm not in norms:
        return None
    obj = norms[norm]
    return obj.jacobian_closed_form(impl if impl is not None else obj.baseline)


def formulas() -> list[str]:
    """ "norm" or "norm:impl" for every registered implementation with a closed form (for messages)."""
    have = []
    for name, norm in all_norms().items():
        with_form = [i for i in norm.impls if norm.jacobian_closed_form(i) is not None]
        if with_form and len(with_form) == len(norm.impls):
            have.append(name)
        else:
            have += [f"{name}:{i}" for i in with_form]
    return have


# -- The bounds the measurements are compared against (Xiong et al. 2020, Lemma 3) -----------------------
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
