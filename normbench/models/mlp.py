"""The LayerNorm paper's permutation-invariant MLP (Ba et al. 2016, "Layer Normalization", §6.6, Fig. 6:
a 784-1000-1000-10 model on MNIST at batch 128 and batch 4), here on the cnn bench's generated images
flattened (3 × 16 × 16 = 768 inputs). Shapes: B images → (B, 768) → [Linear → norm → ReLU] × layers →
Linear(hidden, classes). A per-sample norm (LayerNorm, RMSNorm, DyT) normalizes each image's hidden units
and is kept off the logits ("we only apply layer normalization to the fully-connected hidden layers that
excludes the last softmax layer"); a norm with batch statistics (BatchNorm) normalizes each unit over the
batch and, as the paper's baseline, every layer, the logits too ("batch normalization that is applied to all
layers"). identity = no norm."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from normbench.models.norm import NormLayer
from normbench.norms import get_norm

NO_NORM = "identity"


@dataclass(frozen=True)
class MLPConfig:
    norm: str = "layernorm"
    impl: str | None = None
    inputs: int = 768
    hidden: int = 1000
    layers: int = 2
    classes: int = 10
    eps: float = 1e-5


class DenseNorm(nn.Module):
    """Linear → the norm on (B, 1, width) (per unit over the batch, or per image over the units) → ReLU."""

    def __init__(self, cfg: MLPConfig, n_in: int, n_out: int, site: str, relu: bool = True):
        super().__init__()
        self.linear = nn.Linear(n_in, n_out)
        self.norm = None if cfg.norm == NO_NORM else NormLayer(cfg.norm, cfg.impl, n_out, cfg.eps, site)
        self.relu = relu

    def forward(self, x):
        h = self.linear(x)
        if self.norm is not None:
            h = self.norm(h[:, None, :])[:, 0, :]
        return torch.relu(h) if self.relu else h


class MLP(nn.Module):
    def __init__(self, cfg: MLPConfig):
        super().__init__()
        self.cfg = cfg
        sizes = [cfg.inputs] + [cfg.hidden] * cfg.layers
        # `blocks`: what the fluctuation recorder counts layers by (models/cnn.py does the same)
        self.blocks = nn.ModuleList(
            DenseNorm(cfg, sizes[i - 1], sizes[i], f"{i}.fc") for i in range(1, len(sizes))
        )
        if cfg.norm != NO_NORM and get_norm(cfg.norm).mixes_tokens:  # BatchNorm: every layer, logits too
            self.head = DenseNorm(cfg, cfg.hidden, cfg.classes, "final", relu=False)
        else:
            self.head = nn.Linear(cfg.hidden, cfg.classes)

    def forward(self, x, targets=None):
        """Logits (B, classes), or with targets the mean cross-entropy in nats."""
        x = x.flatten(1)
        for block in self.blocks:
            x = block(x)
        logits = self.head(x)
        if targets is None:
            return logits
        return nn.functional.cross_entropy(logits, targets)

    def norms(self) -> list[NormLayer]:
        return [m for m in self.modules() if isinstance(m, NormLayer)]
