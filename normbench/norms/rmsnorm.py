"""RMSNorm (Zhang & Sennrich 2019): y = x / sqrt(mean(x^2) + eps) * gamma. No centring, no bias."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from normbench.norms.registry import Built, Norm, impl, register_norm


@register_norm
class RMSNorm(Norm):
    name = "rmsnorm"
    description = "RMSNorm over the hidden dim: scale by 1/sqrt(mean(x^2)+eps), gain only"

    @impl("module", baseline=True)
    def module(self, hidden, *, eps, dtype, device):
        """torch.nn.RMSNorm"""
        m = nn.RMSNorm(hidden, eps=eps, device=device, dtype=dtype)
        return Built(m, list(m.parameters()), m)

    @impl("functional")
    def functional(self, hidden, *, eps, dtype, device):
        """torch.nn.functional.rms_norm"""
        w = torch.ones(hidden, dtype=dtype, device=device, requires_grad=True)
        return Built(lambda x: F.rms_norm(x, (hidden,), w, eps), [w])

    @impl("composite")
    def composite(self, hidden, *, eps, dtype, device):
        """x * rsqrt(mean(x^2) + eps) in fp32, cast back, times gain (the Llama / HF form)"""
        w = torch.ones(hidden, dtype=dtype, device=device, requires_grad=True)

        def rms_norm(x):
            xf = x.float()
            return w * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)

        return Built(rms_norm, [w])

    def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
        act, par = tokens * hidden * itemsize, hidden * itemsize
        if mode == "fwd":
            return 2 * act + par  # read x, write y; read gamma
        # forward writes rstd (fp32); backward reads dy, x, gamma, rstd and writes dx, dgamma.
        return 5 * act + 3 * par + 8 * tokens
