"""DyT, Dynamic Tanh (Zhu, Chen, He, LeCun, Liu, "Transformers without Normalization", CVPR 2025,
arXiv:2503.10622): DyT(x) = gamma * tanh(alpha * x) + beta, elementwise, with alpha one learnable scalar
(init alpha0 = 0.5, the paper's default) and per-channel gamma (ones) and beta (zeros). No statistics at
all: the contender that drops the reduction LN and RMSNorm pay for. eps is accepted and unused.

Parameters are exposed in the order (alpha, weight, bias); the module's names are `alpha`, `weight`,
`bias` (the Jacobian bench reads them by name). Its Jacobian is diagonal: gamma * alpha * (1 - tanh^2(alpha x))."""

from __future__ import annotations

from normbench.norms._variants import compiled_built
from normbench.norms.closed_form import Closed, Formula
from normbench.norms.registry import Built, Norm, impl, register_norm


def _dyt(x, alpha, w, b):
    import torch

    return torch.addcmul(b, torch.tanh(alpha * x), w)  # b + tanh(alpha x) * w in one kernel


def _dyt_module(d, dtype, device):
    from normbench.norms._dyt_module import DyT

    return DyT(d, device=device, dtype=dtype)


def _fresh_params(d, dtype, device) -> list:
    m = _dyt_module(d, dtype, device)
    return [m.alpha, m.weight, m.bias]


# -- DyT (Zhu et al. 2025) ---------------------------------------------------------------------------
# DyT(x) = γ ⊙ tanh(αx) + β with α a learnable scalar: elementwise, so J = diag(γ_i·α·(1 − tanh²(αx_i)))
# and σ_max = max_i |γ_i·α|·(1 − tanh²(αx_i)) ≤ max|γ|·|α|, independent of ‖x‖ (unlike LayerNorm).
def jacobian_sigma_max(x, gamma, eps, extra) -> Closed:
    import torch

    alpha = extra["alpha"]
    return Closed((gamma * alpha * (1 - torch.tanh(alpha * x) ** 2)).abs().max(-1).values, True)


@register_norm
class DynamicTanh(Norm):
    name = "dyt"
    description = "DyT: gamma * tanh(alpha x) + beta, alpha a learnable scalar (no statistics)"
    param_names = ("alpha", "weight", "bias")

    @impl("module", baseline=True)
    def module(self, d, *, eps, dtype, device):
        """the paper's nn.Module: weight * tanh(alpha * x) + bias"""
        return Built.of(_dyt_module(d, dtype, device))

    @impl("functional")
    def functional(self, d, *, eps, dtype, device):
        """torch.addcmul(bias, tanh(alpha * x), weight): two kernels instead of three"""
        params = _fresh_params(d, dtype, device)
        return Built(lambda x: _dyt(x, *params), params)

    @impl("compiled", default=False)
    def compiled(self, d, *, eps, dtype, device):
        """torch.compile of the functional form: one fused elementwise kernel"""
        params = _fresh_params(d, dtype, device)
        return compiled_built(_dyt, params, *params)

    def jacobian_closed_form(self, impl):
        return Formula(
            self.name, None, "row", jacobian_sigma_max, "max_i |γ_i α|(1−tanh²(αx_i))", input_statistics=False
        )

    def exact(self, impl, x, params, built, *, eps):
        """float64 DyT from its definition."""
        import torch

        alpha, w, b = params
        return w * torch.tanh(alpha * x) + b

    def bytes_moved(self, impl, tokens, d, itemsize, mode):
        act, par = tokens * d * itemsize, d * itemsize
        if mode == "fwd":
            return 2 * act + 2 * par + itemsize  # read x, write y; read gamma, beta and the scalar alpha
        # Nothing to save: backward reads dy and x (tanh(alpha x) is recomputed) and gamma, alpha, and writes
        # dx, dgamma, dbeta, dalpha. Activations: 2 forward + 3 backward passes. Vectors: gamma, beta, gamma,
        # dgamma, dbeta. Scalars: alpha twice, dalpha.
        return 5 * act + 5 * par + 3 * itemsize
