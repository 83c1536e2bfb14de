"""RMSNorm (Zhang & Sennrich 2019): y = x / sqrt(mean(x^2) + eps) * gamma. No centring, no bias.

Every implementation exposes one parameter, the gain (weight), initialised to ones."""

from __future__ import annotations

from normbench.norms._variants import compiled_built, ones_zeros, third_party
from normbench.norms.closed_form import Closed, Formula, gain_is_constant
from normbench.norms.registry import Built, Norm, impl, register_norm


def _rms_norm(x, w, eps: float):
    import torch.nn.functional as F

    return F.rms_norm(x, (x.shape[-1],), w, eps)


def _composite(x, w, eps: float):
    import torch

    xf = x.float()
    return w * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


# -- RMSNorm -----------------------------------------------------------------------------------------
# RMS(x) = γ ⊙ x/r, r = √(‖x‖²/d + ε). With γ = 1: J₀ = (1/r)(I − xxᵀ/(d·r²)); eigenvalues 1/r on x^⊥
# (multiplicity d−1) and (1/r)(1 − ms/(ms+ε)) = ε/r³ on x̂, where ms = ‖x‖²/d.
#   d ≥ 2: σ_max = 1/√(ms+ε) exactly; with ε = 0 this is √d/‖x‖, Xiong's bound with equality (no centring,
#          so the raw norm is the right one). x = 0 gives I/√ε: the same formula.
#   d = 1: J = γ·ε/(x²+ε)^{3/2} (the x^⊥ space is empty).
#   gain: as for LayerNorm, max|γ|/r is exact for constant |γ| and a bound otherwise.
def jacobian_sigma_max(x, gamma, eps, extra) -> Closed:
    import torch

    d = x.shape[-1]
    ms = x.pow(2).mean(-1)
    r = torch.sqrt(ms + eps)
    if d == 1:
        return Closed(gamma.abs()[0] * eps / r**3, True, regime="eps-term")
    return Closed(gamma.abs().max() / r, gain_is_constant(gamma))


@register_norm
class RMSNorm(Norm):
    name = "rmsnorm"
    description = "RMSNorm over the last dim (d): scale by 1/sqrt(mean(x^2)+eps), gain only"
    param_names = ("weight",)

    @impl("module", baseline=True)
    def module(self, d, *, eps, dtype, device):
        """torch.nn.RMSNorm"""
        from torch import nn

        return Built.of(nn.RMSNorm(d, eps=eps, device=device, dtype=dtype))

    @impl("functional")
    def functional(self, d, *, eps, dtype, device):
        """torch.nn.functional.rms_norm"""
        (w,) = ones_zeros(d, dtype=dtype, device=device, bias=False)
        return Built(lambda x: _rms_norm(x, w, eps), [w])

    @impl("composite")
    def composite(self, d, *, eps, dtype, device):
        """x * rsqrt(mean(x^2) + eps) in fp32, cast back, times gain (the Llama / HF form)"""
        (w,) = ones_zeros(d, dtype=dtype, device=device, bias=False)
        return Built(lambda x: _composite(x, w, eps), [w])

    @impl("compiled", default=False)
    def compiled(self, d, *, eps, dtype, device):
        """torch.compile(F.rms_norm), fullgraph, static shapes (Inductor)"""
        (w,) = ones_zeros(d, dtype=dtype, device=device, bias=False)
        return compiled_built(_rms_norm, [w], w, eps)

    @impl("composite_compiled", default=False)
    def composite_compiled(self, d, *, eps, dtype, device):
        """torch.compile of the Llama / HF form"""
        (w,) = ones_zeros(d, dtype=dtype, device=device, bias=False)
        return compiled_built(_composite, [w], w, eps)

    @impl("apex", requires=("apex.normalization",), default=False)
    def apex(self, d, *, eps, dtype, device):
        """apex.normalization.FusedRMSNorm (CUDA)"""
        from apex.normalization import FusedRMSNorm

        return third_party(lambda: FusedRMSNorm(d, eps=eps), "Apex FusedRMSNorm", dtype=dtype, device=device)

    @impl("liger", requires=("liger_kernel.transformers",), default=False)
    def liger(self, d, *, eps, dtype, device):
        """liger_kernel.transformers.LigerRMSNorm (Triton, CUDA; Llama casting, not in place)"""
        from liger_kernel.transformers import LigerRMSNorm

        def make():
            try:  # in_place=True (the default) writes dx into dy, which the timing loop reuses every call
                return LigerRMSNorm(d, eps=eps, in_place=False)
            except TypeError:  # releases before in_place existed never wrote in place
                return LigerRMSNorm(d, eps=eps)

        return third_party(make, "Liger LigerRMSNorm", dtype=dtype, device=device)

    def jacobian_closed_form(self, impl):
        return Formula(
            self.name,
            None,
            "row",
            jacobian_sigma_max,
            "d≥2: max|γ|/√(mean(x²)+ε) (exact for constant |γ|); d=1: |γ|ε/(x²+ε)^1.5",
        )

    def exact(self, impl, x, params, built, *, eps):
        """float64 RMSNorm from its definition: sum of squares over the row, divided by d."""
        import torch

        (w,) = params
        ms = (x * x).sum(-1, keepdim=True) / x.shape[-1]
        return x / torch.sqrt(ms + eps) * w

    def bytes_moved(self, impl, tokens, d, itemsize, mode):
        act, par = tokens * d * itemsize, d * itemsize
        if mode == "fwd":
            return 2 * act + par  # read x, write y; read gamma
        # forward writes rstd (fp32); backward reads dy, x, gamma, rstd and writes dx, dgamma.
        return 5 * act + 3 * par + 8 * tokens
