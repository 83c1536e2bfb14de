"""DyT's nn.Module, apart from dyt.py so that registering the norm (which `list` and `validate` do) does not
import torch; dyt.py imports this file when it builds an implementation."""

from __future__ import annotations

import torch
from torch import nn

ALPHA0 = 0.5  # the paper's default init of alpha


class DyT(nn.Module):
    """gamma * tanh(alpha * x) + beta over the last dimension (the paper's Algorithm 1)."""

    def __init__(self, d: int, alpha0: float = ALPHA0, *, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.alpha = nn.Parameter(
            torch.full((1,), alpha0, **kw)
        )  # one scalar, shape (1,) as the paper's code
        self.weight = nn.Parameter(torch.ones(d, **kw))
        self.bias = nn.Parameter(torch.zeros(d, **kw))

    def forward(self, x):
        return self.weight * torch.tanh(self.alpha * x) + self.bias

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, alpha={self.alpha.item():g}"
