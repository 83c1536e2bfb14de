"""BatchNorm (Ioffe & Szegedy 2015) applied to the same (tokens, hidden) tensor as LN and RMSNorm:
the statistics run over the token axis, one per hidden channel (nn.BatchNorm1d on (N, C)).

`train` normalizes with the batch statistics and updates the running ones; `eval` uses the running
statistics, which makes it an elementwise affine map (and foldable into a preceding Linear, see the block
bench). Every implementation keeps an nn.BatchNorm1d as `module` (its running statistics) and exposes
(weight, bias) as its parameters."""

from __future__ import annotations

from normbench.norms._variants import compiled_built
from normbench.norms.registry import Built, Norm, impl, register_norm

TRAINING = {"train": True, "eval": False, "train_compiled": True, "eval_compiled": False}


def batchnorm_module(hidden, eps, dtype, device, *, train: bool):
    """An nn.BatchNorm1d with non-trivial running statistics, in train or eval mode."""
    import torch
    from torch import nn

    m = nn.BatchNorm1d(hidden, eps=eps, device=device, dtype=dtype)
    # Non-trivial running statistics, so eval mode is not the identity map. Seeded apart from the
    # caller's generator so that building a module never shifts the case's random inputs.
    g = torch.Generator().manual_seed(1234)
    with torch.no_grad():
        m.running_mean.copy_(0.1 * torch.randn(hidden, generator=g))
        m.running_var.copy_(torch.rand(hidden, generator=g) * 1.5 + 0.5)
    m.train(train)
    return m


def _batchnorm(hidden, eps, dtype, device, *, train: bool) -> Built:
    """The eager module as a Built (the name main's other benches import)."""
    m = batchnorm_module(hidden, eps, dtype, device, train=train)
    return Built(m, list(m.parameters()), m)


def _batch_norm(x, running_mean, running_var, w, b, training: bool, eps: float):
    import torch.nn.functional as F

    return F.batch_norm(x, running_mean, running_var, w, b, training=training, momentum=0.1, eps=eps)


@register_norm
class BatchNorm(Norm):
    name = "batchnorm"
    description = "BatchNorm1d over the token axis of (tokens, hidden), per hidden channel"
    param_names = ("weight", "bias")
    mixes_tokens = True  # statistics over the batch: illegal in a causal LM (benches/_lm.py)

    @impl("train", baseline=True)
    def train(self, hidden, *, eps, dtype, device):
        """nn.BatchNorm1d in train mode: batch statistics, running statistics updated"""
        return _batchnorm(hidden, eps, dtype, device, train=True)

    @impl("eval")
    def eval(self, hidden, *, eps, dtype, device):
        """nn.BatchNorm1d in eval mode: running statistics, an elementwise affine map"""
        return _batchnorm(hidden, eps, dtype, device, train=False)

    @impl("train_compiled", default=False)
    def train_compiled(self, hidden, *, eps, dtype, device):
        """torch.compile(F.batch_norm, training=True): batch statistics, running ones updated in the graph"""
        return self._compiled(hidden, eps, dtype, device, train=True)

    @impl("eval_compiled", default=False)
    def eval_compiled(self, hidden, *, eps, dtype, device):
        """torch.compile(F.batch_norm, training=False): the running-statistics affine map, fused"""
        return self._compiled(hidden, eps, dtype, device, train=False)

    @staticmethod
    def _compiled(hidden, eps, dtype, device, *, train: bool) -> Built:
        m = batchnorm_module(hidden, eps, dtype, device, train=train)
        params = list(m.parameters())
        return compiled_built(
            _batch_norm, params, m.running_mean, m.running_var, *params, train, eps, module=m
        )

    def eager_impl(self, impl: str) -> str:
        """The eager implementation with the same semantics (batch or running statistics)."""
        return "train" if TRAINING[impl] else "eval"

    def reference(self, impl, x, params, built, *, eps):
        """float64 BatchNorm from its definition: per-channel mean and biased variance over the tokens
        (train), or the module's running statistics (eval)."""
        import torch

        w, b = params
        if TRAINING[impl]:
            n = x.shape[0]
            mean = x.sum(0) / n
            var = ((x - mean) ** 2).sum(0) / n
        else:
            mean = built.module.running_mean.detach().double()
            var = built.module.running_var.detach().double()
        return (x - mean) / torch.sqrt(var + eps) * w + b

    def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
        act, par = tokens * hidden * itemsize, hidden * itemsize
        if not TRAINING[impl]:
            if mode == "fwd":
                return 2 * act + 4 * par  # read x, write y; read gamma, beta, running mean and var
            # backward: read dy and x (x for dgamma), write dx, dgamma, dbeta; gamma and stats read again
            return 5 * act + 9 * par
        if mode == "fwd":
            return 2 * act + 6 * par  # read x, write y; read gamma, beta; read+write running mean, var
        # forward also saves mean and invstd (fp32); backward reads dy, x, gamma, saved stats and writes
        # dx, dgamma, dbeta.
        return 5 * act + 9 * par + 16 * hidden
