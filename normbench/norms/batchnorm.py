"""BatchNorm (Ioffe & Szegedy 2015) applied to the same (tokens, d) tensor as LN and RMSNorm:
the statistics run over the token axis, one per channel of d (nn.BatchNorm1d on (N, C)).

`train` normalizes with the batch statistics and updates the running ones; `eval` uses the running
statistics, which makes it an elementwise affine map (and foldable into a preceding Linear, see the block
bench). In a model fed padded batches, the NormLayer hands it the real tokens only (models/norm.py), so
the batch mean and variance, and the running ones, are over real tokens (biased variance to normalize,
unbiased for the running average, as nn.BatchNorm1d does). That is the textbook BatchNorm with the padding
left out; it is not the baseline the PowerNorm paper ran: their NormSelect("batch") builds
MaskSyncBatchNorm (sIncerass/powernorm, fairseq/modules/norm_select.py), which first divides each token by
its RMS over channels, fills the padding with the real tokens' mean and uses momentum 0.05; that is the
impl `official` (norms/_batchnorm_official.py). The other implementations keep an nn.BatchNorm1d as
`module` (its running statistics); every one exposes (weight, bias) as its parameters."""

from __future__ import annotations

from normbench.norms._batchnorm_official import official_exact, official_module_class
from normbench.norms._variants import compiled_built
from normbench.norms.closed_form import Closed, Formula
from normbench.norms.registry import Built, Norm, impl, register_norm

TRAINING = {"train": True, "eval": False, "train_compiled": True, "eval_compiled": False, "official": True}


def batchnorm_module(d, eps, dtype, device, *, train: bool):
    """An nn.BatchNorm1d with non-trivial running statistics, in train or eval mode."""
    import torch
    from torch import nn

    m = nn.BatchNorm1d(d, eps=eps, device=device, dtype=dtype)
    # Non-trivial running statistics, so eval mode is not the identity map. Seeded apart from the
    # caller's generator so that building a module never shifts the case's random inputs.
    g = torch.Generator().manual_seed(1234)
    with torch.no_grad():
        m.running_mean.copy_(0.1 * torch.randn(d, generator=g))
        m.running_var.copy_(torch.rand(d, generator=g) * 1.5 + 0.5)
    m.train(train)
    return m


def _batchnorm(d, eps, dtype, device, *, train: bool) -> Built:
    """The eager module as a Built (the name main's other benches import)."""
    return Built.of(batchnorm_module(d, eps, dtype, device, train=train))


def _batch_norm(x, running_mean, running_var, w, b, training: bool, eps: float):
    import torch.nn.functional as F

    return F.batch_norm(x, running_mean, running_var, w, b, training=training, momentum=0.1, eps=eps)


# -- BatchNorm, eval mode ----------------------------------------------------------------------------
# y_c = γ_c (x_c − running_mean_c)/√(running_var_c + ε) + β_c: an elementwise affine map, so J is
# diagonal and σ_max = max_c |γ_c|/√(running_var_c + ε), whatever the input.
def jacobian_sigma_max_eval(x, gamma, eps, extra) -> Closed:
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
def jacobian_sigma_max_train(x, gamma, eps, extra) -> Closed:
    import torch

    m = x.shape[-2]
    v = x.var(-2, unbiased=False)  # (n, d): per channel, over the batch
    s = torch.sqrt(v + eps)
    per_channel = gamma.abs() * (eps / s**3 if m == 2 else 1 / s)
    return Closed(per_channel.max(-1).values, True, per_channel, "eps-term" if m == 2 else "general")


@register_norm
class BatchNorm(Norm):
    name = "batchnorm"
    description = "BatchNorm1d over the token axis of (tokens, d), per channel"
    param_names = ("weight", "bias")
    module_impl = "train"  # nn.BatchNorm1d; a model switches it with train()/eval()
    inference_impl = "eval"
    mixes_tokens = True  # statistics over every token of the batch
    folds_into_linear = True

    @impl("train", baseline=True)
    def train(self, d, *, eps, dtype, device):
        """nn.BatchNorm1d in train mode: batch statistics, running statistics updated"""
        return _batchnorm(d, eps, dtype, device, train=True)

    @impl("eval")
    def eval(self, d, *, eps, dtype, device):
        """nn.BatchNorm1d in eval mode: running statistics, an elementwise affine map"""
        return _batchnorm(d, eps, dtype, device, train=False)

    @impl("official", default=False)
    def official(self, d, *, eps, dtype, device):
        """As the PowerNorm authors ran it (NormSelect("batch") = MaskSyncBatchNorm): each token divided by its
        RMS over channels, padding filled with the real tokens' mean, momentum 0.05 (norms/_batchnorm_official.py)"""
        return Built.of(official_module_class()(d, eps, device=device, dtype=dtype).train())

    @impl("train_compiled", default=False)
    def train_compiled(self, d, *, eps, dtype, device):
        """torch.compile(F.batch_norm, training=True): batch statistics, running ones updated in the graph"""
        return self._compiled(d, eps, dtype, device, train=True)

    @impl("eval_compiled", default=False)
    def eval_compiled(self, d, *, eps, dtype, device):
        """torch.compile(F.batch_norm, training=False): the running-statistics affine map, fused"""
        return self._compiled(d, eps, dtype, device, train=False)

    @staticmethod
    def _compiled(d, eps, dtype, device, *, train: bool) -> Built:
        m = batchnorm_module(d, eps, dtype, device, train=train)
        params = list(m.parameters())
        return compiled_built(
            _batch_norm, params, m.running_mean, m.running_var, *params, train, eps, module=m
        )

    def eager_impl(self, impl: str) -> str:
        """The eager implementation with the same semantics (batch or running statistics)."""
        if impl == "official":
            return impl
        return "train" if TRAINING[impl] else "eval"

    def jacobian_closed_form(self, impl):
        """Running statistics (eval): a diagonal map of the row; batch statistics (train): the whole batch;
        `official` (layer scaling first): none."""
        if impl == "official":
            return None
        if TRAINING[impl]:
            return Formula(
                self.name,
                impl,
                "batch",
                jacobian_sigma_max_train,
                "max_c |γ_c|/√(batch_var_c+ε) for m≥3; |γ_c|ε/(var_c+ε)^1.5 for m=2",
            )
        return Formula(
            self.name,
            impl,
            "row",
            jacobian_sigma_max_eval,
            "max_c |γ_c|/√(running_var_c+ε), diagonal",
            input_statistics=False,
        )

    def fold_into_linear(self, built, weight, bias, *, eps):
        """Eval BatchNorm after x Wᵀ + b: s = γ/√(running_var + ε), W' = diag(s) W,
        b' = s ⊙ (b − running_mean) + β (float64)."""
        import torch

        bn = built.module
        s = bn.weight.detach().double() / torch.sqrt(bn.running_var.double() + eps)
        w = weight * s[:, None]
        b = s * (bias - bn.running_mean.double()) + bn.bias.detach().double()
        return w, b

    def exact(self, impl, x, params, built, *, eps):
        """float64 BatchNorm from its definition: per-channel mean and biased variance over the tokens
        (train), or the module's running statistics (eval)."""
        import torch

        if impl == "official":
            return official_exact(x, params, built.module, eps)
        w, b = params
        if TRAINING[impl]:
            n = x.shape[0]
            mean = x.sum(0) / n
            var = ((x - mean) ** 2).sum(0) / n
        else:
            mean = built.module.running_mean.detach().double()
            var = built.module.running_var.detach().double()
        return (x - mean) / torch.sqrt(var + eps) * w + b

    def bytes_moved(self, impl, tokens, d, itemsize, mode):
        act, par = tokens * d * itemsize, d * itemsize
        if not TRAINING[impl]:
            if mode == "fwd":
                return 2 * act + 4 * par  # read x, write y; read gamma, beta, running mean and var
            # backward: read dy and x (x for dgamma), write dx, dgamma, dbeta; gamma and stats read again
            return 5 * act + 9 * par
        if mode == "fwd":
            return 2 * act + 6 * par  # read x, write y; read gamma, beta; read+write running mean, var
        # forward also saves mean and invstd (fp32); backward reads dy, x, gamma, saved stats and writes
        # dx, dgamma, dbeta.
        return 5 * act + 9 * par + 16 * d
