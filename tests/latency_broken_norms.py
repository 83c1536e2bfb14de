"""Deliberately wrong LayerNorm implementations for tests only (imported in-process by the tests, or by a
subprocess through NORMBENCH_PLUGINS=latency_broken_norms): the accuracy ratio and the re-check after the
timing loop must catch them."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from normbench.norms._variants import ones_zeros
from normbench.norms.layernorm import LayerNorm
from normbench.norms.registry import Built, impl, register_norm


@register_norm
class BrokenLayerNorm(LayerNorm):
    name = "layernorm_broken"
    description = "test only: LayerNorm with deliberate errors"

    @impl("unbiased")
    def unbiased(self, hidden, *, eps, dtype, device):
        """the variance divided by d - 1 instead of d: a relative error of about 1/(2d) in every output"""
        w, b = ones_zeros(hidden, dtype=dtype, device=device)

        def fn(x):
            xf = x.float()
            var = xf.var(-1, unbiased=True, keepdim=True)
            return ((xf - xf.mean(-1, keepdim=True)) * torch.rsqrt(var + eps)).to(x.dtype) * w + b

        return Built(fn, [w, b])

    @impl("drifting")
    def drifting(self, hidden, *, eps, dtype, device):
        """exact for its first 10 calls, then off by 0.01: right before timing, wrong after it"""
        w, b = ones_zeros(hidden, dtype=dtype, device=device)
        calls = [0]

        def fn(x):
            calls[0] += 1
            y = F.layer_norm(x, (hidden,), w, b, eps)
            return y if calls[0] <= 10 else y + 0.01

        return Built(fn, [w, b])
