"""PowerNorm (Shen, Yao, Gholami, Mahoney, Keutzer, "PowerNorm: Rethinking Batch Normalization in
Transformers", ICML 2020, arXiv:2003.07845), Algorithm 1 ("Power Normalization, every iteration"), on the
(tokens, d) tensor as BatchNorm: statistics per channel, over every token of the batch.

Train, iteration t, batch X ∈ ℝ^{B×d} (all leading dims of (..., d) are the batch):
    forward     ψ_B² = (1/B) Σ_i x_i²                      quadratic mean of the batch, per channel
                X̂ = X / ψ_{t−1}                            relaxed zero-mean: no centring, *running* ψ
                Y = γ ⊙ X̂ + β
                ψ_t² = α ψ_{t−1}² + (1−α) ψ_B²              running quadratic mean (buffer `running_phi`)
    backward    ∂L/∂X̂ = γ ⊙ ∂L/∂Y
                X̃' = ∂L/∂X̂ − ν_{t−1} ⊙ X̂                  approximate backprop through the running ψ
                ∂L/∂X = X̃' / ψ_{t−1}
                ν_t = ν_{t−1} ⊙ (1 − (1−α)Γ_t) + (1−α)Λ_t   (buffer `running_nu`), with
                      Γ_t = (1/B) Σ_i x̂_i ⊙ x̂_i  and  Λ_t = (1/B) Σ_i x̂_i ⊙ ∂L/∂x̂_i
Inference: Y = γ ⊙ X / ψ + β, an elementwise affine map: it folds into a preceding Linear and its Jacobian
is diag(γ/ψ), σ_max = max_c |γ_c|/√(ψ_c² + ε).

Choices where the paper is silent: ε sits inside the root, 1/√(ψ² + ε) (as BatchNorm and the official code;
Algorithm 1 writes X/ψ); α = 0.9 for both the forward and the backward average (the official code's
alpha_fwd = alpha_bkw default); ψ² starts at 1 and ν at 0 (the official buffers' init). The backward is the
paper's approximation, not the derivative of the forward, so the train implementation has no Jacobian
closed form (jacrev would differentiate through the approximation); `powernorm:eval` has one.

Where the official code (github.com/sIncerass/powernorm, fairseq/modules/norms/mask_powernorm.py) differs
(the impl `official`, norms/_powernorm_official.py, runs it as written; `train` stays Algorithm 1):
  * it first divides every token by its own RMS over channel groups (GroupScaling1D: RMSNorm without a
    gain, per group, before PN); not in Algorithm 1. PN's per-channel batch statistics still follow it, so
    the whole stays a batch-statistics norm (its statistics, warm-up and backward are PN's);
  * it normalizes with the batch's statistics during a warm-up (MaskPowerNorm's default 10000 calls; the
    transformer passes the lr warm-up, --warmup-updates, 8000 in their IWSLT14 script) and averages ψ²
    cumulatively there; Algorithm 1 has no warm-up;
  * its backward divides by the batch's √(ψ_B² + ε) instead of ψ_{t−1}, subtracts (1−α)ν x̂ instead of
    ν x̂, and adds Λ to ν without the (1−α) factor; this file uses Algorithm 1's equations as written;
  * it drops padded tokens from the statistics (MaskPowerNorm's pad_mask); with padded batches the model's
    NormLayer gives every implementation here the real tokens only (models/norm.py), so ψ_B², Γ_t and Λ_t
    average over them.

The module keeps ψ² in the buffer `running_phi` (shape (d,), the contract with the model's fluctuation
rows) and ν in `running_nu`. Its class is made on first use so that importing this file (which `list` and
`validate` do) imports no torch.
"""

from __future__ import annotations

from functools import cache

from normbench.norms._powernorm_official import (
    official_exact,
    official_exact_grads,
    official_module_class,
)
from normbench.norms.closed_form import Formula, diagonal_affine
from normbench.norms.registry import Built, Norm, impl, register_norm

ALPHA = 0.9  # the official code's alpha_fwd = alpha_bkw
OFFICIAL = ("official", "official_final1000")  # the authors' code; the second with their final-norm warm-up


@cache
def power_function():
    """The autograd Function of Algorithm 1 (train mode), made once."""
    import torch

    class PowerFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, bias, running_phi, running_nu, alpha: float, eps: float):
            stat = torch.promote_types(x.dtype, torch.float32)  # statistics at least in fp32
            inv_psi = torch.rsqrt(running_phi.to(stat) + eps)  # 1/ψ_{t−1} = 1/√(ψ²_{t−1} + ε)
            x_hat = (x.to(stat) * inv_psi).to(x.dtype)  # X̂ = X / ψ_{t−1}
            y = weight * x_hat + bias  # Y = γ ⊙ X̂ + β
            psi2_batch = x.to(stat).square().mean(0)  # ψ_B² = (1/B) Σ_i x_i²
            running_phi.mul_(alpha).add_(
                (1 - alpha) * psi2_batch.to(running_phi.dtype)
            )  # ψ_t² = αψ²_{t−1} + (1−α)ψ_B²
            ctx.save_for_backward(x_hat, inv_psi.to(x.dtype), weight)
            ctx.running_nu, ctx.alpha = running_nu, alpha
            return y

        @staticmethod
        def backward(ctx, grad_y):
            x_hat, inv_psi, weight = ctx.saved_tensors
            nu, alpha = ctx.running_nu, ctx.alpha
            g_hat = grad_y * weight  # ∂L/∂X̂ = γ ⊙ ∂L/∂Y
            x_tilde = g_hat - nu.to(x_hat.dtype) * x_hat  # X̃' = ∂L/∂X̂ − ν_{t−1} ⊙ X̂
            grad_x = x_tilde * inv_psi  # ∂L/∂X = X̃' / ψ_{t−1}
            stat = torch.promote_types(x_hat.dtype, torch.float32)
            gamma_t = x_hat.to(stat).square().mean(0)  # Γ_t = (1/B) Σ_i x̂_i ⊙ x̂_i
            lambda_t = (x_hat.to(stat) * g_hat.to(stat)).mean(0)  # Λ_t = (1/B) Σ_i x̂_i ⊙ ∂L/∂x̂_i
            with torch.no_grad():  # ν_t = ν_{t−1} ⊙ (1 − (1−α)Γ_t) + (1−α)Λ_t
                nu.mul_((1 - (1 - alpha) * gamma_t).to(nu.dtype)).add_(((1 - alpha) * lambda_t).to(nu.dtype))
            grad_w = (grad_y * x_hat).sum(0)  # ∂L/∂γ = Σ_i ∂L/∂y_i ⊙ x̂_i
            grad_b = grad_y.sum(0)  # ∂L/∂β = Σ_i ∂L/∂y_i
            return grad_x, grad_w, grad_b, None, None, None, None

    return PowerFunction


@cache
def module_class():
    """PowerNorm1d, the nn.Module (train: Algorithm 1; eval: the running ψ), made once."""
    import torch
    from torch import nn

    class PowerNorm1d(nn.Module):
        """PowerNorm over the last dim of (..., d); statistics over every leading position."""

        def __init__(self, d: int, eps: float = 1e-5, alpha: float = ALPHA, *, device=None, dtype=None):
            super().__init__()
            kw = {"device": device, "dtype": dtype}
            self.eps, self.alpha = eps, alpha
            self.weight = nn.Parameter(torch.ones(d, **kw))
            self.bias = nn.Parameter(torch.zeros(d, **kw))
            self.register_buffer("running_phi", torch.ones(d, **kw))  # ψ², the running quadratic mean
            self.register_buffer("running_nu", torch.zeros(d, **kw))  # ν, the backward's running average

        def forward(self, x):
            flat = x.reshape(-1, x.shape[-1])
            if self.training:
                y = power_function().apply(
                    flat, self.weight, self.bias, self.running_phi, self.running_nu, self.alpha, self.eps
                )
            else:  # inference: Y = γ ⊙ X/ψ + β
                y = flat * torch.rsqrt(self.running_phi + self.eps) * self.weight + self.bias
            return y.reshape(x.shape)

        def extra_repr(self) -> str:
            return f"{self.weight.shape[0]}, eps={self.eps:g}, alpha={self.alpha:g}"

    return PowerNorm1d


def powernorm_module(d, eps, dtype, device, *, train: bool):
    """A PowerNorm1d in train mode with the official init (ψ² = 1, ν = 0), or in eval mode with a seeded
    non-trivial ψ² (as BatchNorm's eval builder), so that inference is not a near-identity map."""
    import torch

    m = module_class()(d, eps, device=device, dtype=dtype)
    if not train:
        g = torch.Generator().manual_seed(1234)  # apart from the caller's generator
        with torch.no_grad():
            m.running_phi.copy_(torch.rand(d, generator=g) * 1.5 + 0.5)
    m.train(train)
    return m


def jacobian_sigma_max_eval(x, gamma, eps, extra):
    """Inference is y = γ ⊙ x/√(ψ² + ε) + β: J = diag(γ_c/√(ψ_c² + ε)), σ_max its largest |entry|."""
    import torch

    return diagonal_affine(gamma / torch.sqrt(extra["running_phi"] + eps), x.shape[0])


@register_norm
class PowerNorm(Norm):
    name = "powernorm"
    description = "PowerNorm (Shen et al. 2020): x / running quadratic mean, approximate backward"
    param_names = ("weight", "bias")
    module_impl = "train"  # PowerNorm1d; a model switches it with train()/eval()
    inference_impl = "eval"
    mixes_tokens = True  # ψ_B² runs over every token of the batch
    folds_into_linear = True
    stateful = True  # train: Y uses ψ_{t−1}, which every call moves

    @impl("train", baseline=True)
    def train(self, d, *, eps, dtype, device):
        """PowerNorm1d in train mode: Algorithm 1 (running ψ in the forward, approximate backward)"""
        return Built.of(powernorm_module(d, eps, dtype, device, train=True))

    @impl("official", default=False)
    def official(self, d, *, eps, dtype, device):
        """As sIncerass/powernorm runs it: GroupScaling (groups = heads in a model), batch statistics during
        the lr warm-up, their backward (norms/_powernorm_official.py)"""
        return Built.of(official_module_class()(d, eps, device=device, dtype=dtype).train())

    @impl("official_final1000", default=False)
    def official_final1000(self, d, *, eps, dtype, device):
        """`official`, with the encoder's final norm on batch statistics for NormSelect's default 1000
        calls whatever the lr warm-up, as their model builds it (norms/_powernorm_official.py)"""
        m = official_module_class()(d, eps, device=device, dtype=dtype).train()
        m.literal_final = True
        return Built.of(m)

    @impl("eval")
    def eval(self, d, *, eps, dtype, device):
        """PowerNorm1d in eval mode: γ ⊙ x/ψ + β, an elementwise affine map"""
        return Built.of(powernorm_module(d, eps, dtype, device, train=False))

    def eager_impl(self, impl):
        return impl

    def exact(self, impl, x, params, built, *, eps):
        """float64 Y = γ ⊙ X/√(ψ² + ε) + β with the ψ² the next call starts from (ψ_{t−1} in train)."""
        import torch

        if impl in OFFICIAL:
            return official_exact(x, params, built.module, eps)
        w, b = params
        psi2 = built.module.running_phi.detach().double()
        return x / torch.sqrt(psi2 + eps) * w + b

    def exact_grads(self, impl, x, dy, params, built, *, eps):
        """Train: the approximate backward in float64, from the state the next call starts from (ψ_{t−1},
        ν_{t−1}); eval: None (autograd of `exact` is right there)."""
        if impl in OFFICIAL:
            return official_exact_grads(x, dy, params, built.module, eps)
        if impl != "train":
            return None
        import torch

        w, _ = params
        inv_psi = 1 / torch.sqrt(built.module.running_phi.detach().double() + eps)
        nu = built.module.running_nu.detach().double()
        x_hat = x * inv_psi
        return {
            "dx": (w * dy - nu * x_hat) * inv_psi,
            "dweight": (dy * x_hat).sum(0),
            "dbias": dy.sum(0),
        }

    def jacobian_closed_form(self, impl):
        if impl != "eval":
            return None
        return Formula(
            self.name,
            impl,
            "row",
            jacobian_sigma_max_eval,
            "max_c |γ_c|/√(running_phi_c+ε), diagonal",
            input_statistics=False,
        )

    def fold_into_linear(self, built, weight, bias, *, eps):
        """After x Wᵀ + b at inference: s = γ/√(ψ² + ε), W' = diag(s) W, b' = s ⊙ b + β (float64)."""
        import torch

        m = built.module
        s = m.weight.detach().double() / torch.sqrt(m.running_phi.double() + eps)
        return weight * s[:, None], s * bias + m.bias.detach().double()

    def bytes_moved(self, impl, tokens, d, itemsize, mode):
        act, par = tokens * d * itemsize, d * itemsize
        if impl == "eval":
            if mode == "fwd":
                return 2 * act + 3 * par  # read x, write y; read gamma, beta, psi^2
            # backward: read dy and x (x_hat recomputed), write dx, dgamma, dbeta; read gamma, psi^2 again
            return 5 * act + 7 * par
        if mode == "fwd":
            return 2 * act + 4 * par  # read x (psi_B^2 in the same pass), write y; gamma, beta; psi^2 r+w
        # backward: read dy and x (x_hat = x/psi recomputable), write dx; read gamma, psi, nu; write nu,
        # dgamma, dbeta
        return 5 * act + 10 * par
