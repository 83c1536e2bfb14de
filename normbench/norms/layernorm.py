"""LayerNorm (Ba et al. 2016): y = (x - mean(x)) / sqrt(var(x) + eps) * gamma + beta over the last dim,
with the biased variance, as torch computes it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from normbench.norms.registry import Built, Norm, impl, register_norm


@register_norm
class LayerNorm(Norm):
    name = "layernorm"
    description = "LayerNorm over the hidden dim: centre, scale by 1/sqrt(var+eps), affine"

    @impl("module", baseline=True)
    def module(self, hidden, *, eps, dtype, device):
        """torch.nn.LayerNorm"""
        m = nn.LayerNorm(hidden, eps=eps, device=device, dtype=dtype)
        return Built(m, list(m.parameters()), m)

    @impl("functional")
    def functional(self, hidden, *, eps, dtype, device):
        """torch.nn.functional.layer_norm"""
        w = torch.ones(hidden, dtype=dtype, device=device, requires_grad=True)
        b = torch.zeros(hidden, dtype=dtype, device=device, requires_grad=True)
        return Built(lambda x: F.layer_norm(x, (hidden,), w, b, eps), [w, b])

    @impl("composite")
    def composite(self, hidden, *, eps, dtype, device):
        """hand-written mean/var/rsqrt in fp32, cast back (what many model files do)"""
        w = torch.ones(hidden, dtype=dtype, device=device, requires_grad=True)
        b = torch.zeros(hidden, dtype=dtype, device=device, requires_grad=True)

        def layer_norm(x):
            xf = x.float()
            mean = xf.mean(-1, keepdim=True)
            var = (xf - mean).pow(2).mean(-1, keepdim=True)  # biased, as torch's layer_norm
            return (xf - mean).mul(torch.rsqrt(var + eps)).to(x.dtype) * w + b

        return Built(layer_norm, [w, b])

    def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
        act, par = tokens * hidden * itemsize, hidden * itemsize
        if mode == "fwd":
            return 2 * act + 2 * par  # read x, write y; read gamma, beta
        # forward also writes mean and rstd (fp32, 8 bytes a row); backward reads dy, x, gamma, mean, rstd
        # and writes dx, dgamma, dbeta: 5 activation passes in all.
        return 5 * act + 5 * par + 16 * tokens
