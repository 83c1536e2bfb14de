"""The shape of a Jacobian closed form, as a norm declares it (`Norm.jacobian_closed_form`). Torch-free to
import: validating a suite asks which norms have one without building anything. A norm whose Jacobian is
well defined but has no known closed form declares a Formula with compute=None: the jacobian bench then
measures σ_max and compares it with Xiong's bounds only.

A closed form maps the float64 inputs the norm actually saw, its gain γ, ε and `extra` (the case's
float64 parameters and module buffers by name: `alpha`, `running_var`, ...) to the predicted σ_max(J) per
input, saying whether that is an equality (`exact`) or only an upper bound. The shared bounds it is
compared against (Xiong et al.'s √d/‖x‖) live in normbench/benches/_jacobian/predictions.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    # (x, γ, ε, extra) -> Closed; None: no closed form is known, σ_max is measured and compared with
    # Xiong's bounds only (the jacobian bench's rows then lack closed_form and rel_err)
    compute: Callable[[torch.Tensor, torch.Tensor, float, dict[str, Any]], Closed] | None
    summary: str
    # The norm computes statistics of x (mean, x²): those must not overflow the case's dtype. Elementwise
    # maps (BatchNorm eval, PowerNorm eval, DyT) have none.
    input_statistics: bool = True


def gain_is_constant(gamma: torch.Tensor) -> bool:
    a = gamma.abs()
    return bool(a.max() == a.min())


def diagonal_affine(scale: torch.Tensor, n: int) -> Closed:
    """An elementwise affine map y = s ⊙ x + c has J = diag(s): σ_max = max|s| for every one of n inputs."""
    return Closed(scale.abs().max().expand(n).clone(), True)
