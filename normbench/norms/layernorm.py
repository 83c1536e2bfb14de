"""LayerNorm (Ba et al. 2016): y = (x - mean(x)) / sqrt(var(x) + eps) * gamma + beta over the last dim,
with the biased variance, as torch computes it.

Every implementation exposes its parameters in the order (weight, bias) with the same initial values,
so the bench can give them all the same perturbed values and compare them on identical tensors."""

from __future__ import annotations

from normbench.norms._variants import compiled_built, ones_zeros, third_party
from normbench.norms.closed_form import Closed, Formula, gain_is_constant
from normbench.norms.registry import Built, Norm, impl, register_norm


def _layer_norm(x, w, b, eps: float):
    import torch.nn.functional as F

    return F.layer_norm(x, (x.shape[-1],), w, b, eps)


def _composite(x, w, b, eps: float):
    import torch

    xf = x.float()
    mean = xf.mean(-1, keepdim=True)
    var = (xf - mean).pow(2).mean(-1, keepdim=True)  # biased, as torch's layer_norm
    return (xf - mean).mul(torch.rsqrt(var + eps)).to(x.dtype) * w + b


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
def jacobian_sigma_max(x, gamma, eps, extra) -> Closed:
    import torch

    d = x.shape[-1]
    v = x.var(-1, unbiased=False)
    s = torch.sqrt(v + eps)
    if d == 1:
        return Closed(torch.zeros_like(v), True, regime="zero")
    if d == 2:
        return Closed(eps / s**3 * gamma.pow(2).mean().sqrt(), True, regime="eps-term")
    return Closed(gamma.abs().max() / s, gain_is_constant(gamma))


@register_norm
class LayerNorm(Norm):
    name = "layernorm"
    description = "LayerNorm over the last dim (d): centre, scale by 1/sqrt(var+eps), affine"
    param_names = ("weight", "bias")

    @impl("module", baseline=True)
    def module(self, d, *, eps, dtype, device):
        """torch.nn.LayerNorm"""
        from torch import nn

        return Built.of(nn.LayerNorm(d, eps=eps, device=device, dtype=dtype))

    @impl("functional")
    def functional(self, d, *, eps, dtype, device):
        """torch.nn.functional.layer_norm"""
        w, b = ones_zeros(d, dtype=dtype, device=device)
        return Built(lambda x: _layer_norm(x, w, b, eps), [w, b])

    @impl("composite")
    def composite(self, d, *, eps, dtype, device):
        """hand-written mean/var/rsqrt in fp32, cast back (what many model files do)"""
        w, b = ones_zeros(d, dtype=dtype, device=device)
        return Built(lambda x: _composite(x, w, b, eps), [w, b])

    @impl("compiled", default=False)
    def compiled(self, d, *, eps, dtype, device):
        """torch.compile(F.layer_norm), fullgraph, static shapes (Inductor)"""
        w, b = ones_zeros(d, dtype=dtype, device=device)
        return compiled_built(_layer_norm, [w, b], w, b, eps)

    @impl("composite_compiled", default=False)
    def composite_compiled(self, d, *, eps, dtype, device):
        """torch.compile of the hand-written fp32 form (what compiling a model file gives)"""
        w, b = ones_zeros(d, dtype=dtype, device=device)
        return compiled_built(_composite, [w, b], w, b, eps)

    @impl("apex", requires=("apex.normalization",), default=False)
    def apex(self, d, *, eps, dtype, device):
        """apex.normalization.FusedLayerNorm (CUDA)"""
        from apex.normalization import FusedLayerNorm

        return third_party(
            lambda: FusedLayerNorm(d, eps=eps), "Apex FusedLayerNorm", dtype=dtype, device=device
        )

    @impl("liger", requires=("liger_kernel.transformers",), default=False)
    def liger(self, d, *, eps, dtype, device):
        """liger_kernel.transformers.LigerLayerNorm (Triton, CUDA)"""
        from liger_kernel.transformers import LigerLayerNorm

        return third_party(
            lambda: LigerLayerNorm(d, eps=eps), "Liger LigerLayerNorm", dtype=dtype, device=device
        )

    def jacobian_closed_form(self, impl):
        return Formula(
            self.name,
            None,
            "row",
            jacobian_sigma_max,
            "d≥3: max|γ|/√(var+ε) (exact for constant |γ|); d=2: ε·rms(γ)/(var+ε)^1.5; d=1: 0",
        )

    def exact(self, impl, x, params, built, *, eps):
        """float64 LayerNorm from its definition: sums over the row, divided by d (not torch's kernels)."""
        import torch

        w, b = params
        d = x.shape[-1]
        mean = x.sum(-1, keepdim=True) / d
        centred = x - mean
        var = (centred * centred).sum(-1, keepdim=True) / d
        return centred / torch.sqrt(var + eps) * w + b

    def bytes_moved(self, impl, tokens, d, itemsize, mode):
        act, par = tokens * d * itemsize, d * itemsize
        if mode == "fwd":
            return 2 * act + 2 * par  # read x, write y; read gamma, beta
        # forward also writes mean and rstd (fp32, 8 bytes a row); backward reads dy, x, gamma, mean, rstd
        # and writes dx, dgamma, dbeta: 5 activation passes in all.
        return 5 * act + 5 * par + 16 * tokens
