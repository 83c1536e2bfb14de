"""ScaleNorm (Nguyen & Salazar 2019, "Transformers without Tears", eq. 6): y = g * x / max(||x||, eps),
one learned scalar g initialised to sqrt(d). A complete norm in one file, as the README's "Adding a norm"
describes."""

from __future__ import annotations

import math

from normbench.norms.registry import Built, Norm, impl, register_norm


@register_norm
class ScaleNorm(Norm):
    name = "scalenorm"
    description = "ScaleNorm: g * x / ||x||, one scalar gain g = sqrt(d) (plugin)"
    param_names = ("g",)

    @impl("module", baseline=True)
    def module(self, hidden, *, eps, dtype, device):
        """g * x / max(||x||_2, eps) with torch.linalg.vector_norm"""
        import torch

        g = torch.nn.Parameter(torch.full((), math.sqrt(hidden), dtype=dtype, device=device))

        def fn(x):
            norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(eps)
            return g * x / norm

        return Built(fn, [g])

    def exact(self, impl, x, params, built, *, eps):
        """The same equation from sums, in whatever dtype x has (the accuracy check passes float64)."""
        (g,) = params
        norm = (x * x).sum(-1, keepdim=True).sqrt().clamp_min(eps)
        return g * x / norm

    def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
        # fwd: read x, write y; fwd+bwd adds read x, read dy, write dx (g is a scalar)
        n = tokens * hidden * itemsize
        return 2 * n if mode == "fwd" else 5 * n
