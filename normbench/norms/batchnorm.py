"""BatchNorm (Ioffe & Szegedy 2015) applied to the same (tokens, hidden) tensor as LN and RMSNorm:
the statistics run over the token axis, one per hidden channel (nn.BatchNorm1d on (N, C)).

`train` normalizes with the batch statistics and updates the running ones; `eval` uses the running
statistics, which makes it an elementwise affine map (and foldable into a preceding Linear)."""

from __future__ import annotations

import torch
from torch import nn

from normbench.norms.registry import Built, Norm, impl, register_norm


def _batchnorm(hidden, eps, dtype, device, *, train: bool) -> Built:
    m = nn.BatchNorm1d(hidden, eps=eps, device=device, dtype=dtype)
    # Non-trivial running statistics, so eval mode is not the identity map. Seeded apart from the
    # caller's generator so that building a module never shifts the case's random inputs.
    g = torch.Generator().manual_seed(1234)
    with torch.no_grad():
        m.running_mean.copy_(0.1 * torch.randn(hidden, generator=g))
        m.running_var.copy_(torch.rand(hidden, generator=g) * 1.5 + 0.5)
    m.train(train)
    return Built(m, list(m.parameters()), m)


@register_norm
class BatchNorm(Norm):
    name = "batchnorm"
    description = "BatchNorm1d over the token axis of (tokens, hidden), per hidden channel"

    @impl("train", baseline=True)
    def train(self, hidden, *, eps, dtype, device):
        """nn.BatchNorm1d in train mode: batch statistics, running statistics updated"""
        return _batchnorm(hidden, eps, dtype, device, train=True)

    @impl("eval")
    def eval(self, hidden, *, eps, dtype, device):
        """nn.BatchNorm1d in eval mode: running statistics, an elementwise affine map"""
        return _batchnorm(hidden, eps, dtype, device, train=False)

    def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
        act, par = tokens * hidden * itemsize, hidden * itemsize
        if impl == "eval":
            if mode == "fwd":
                return 2 * act + 4 * par  # read x, write y; read gamma, beta, running mean and var
            # backward: read dy and x (x for dgamma), write dx, dgamma, dbeta; gamma and stats read again
            return 5 * act + 9 * par
        if mode == "fwd":
            return 2 * act + 6 * par  # read x, write y; read gamma, beta; read+write running mean, var
        # forward also saves mean and invstd (fp32); backward reads dy, x, gamma, saved stats and writes
        # dx, dgamma, dbeta.
        return 5 * act + 9 * par + 16 * hidden
