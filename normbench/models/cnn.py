"""A small CNN for the BatchNorm-vs-LayerNorm control on images (Ba et al. 2016, "Layer Normalization"
§6.7: in convolutional networks "batch normalization outperforms the other methods"). Shapes: B images,
C channels, H × W pixels.

    stage s = 1, 2, 3 (C = width · 2^(s−1); stages 2 and 3 halve H and W with a stride-2 conv):
        [conv 3×3 → norm → ReLU] × 2
    global average pool → Linear(C, classes)

Each norm comes from the registry through NormLayer (models/norm.py), in the layout its definition needs:
a norm with batch statistics (BatchNorm, PowerNorm) normalizes each channel over the batch and every
pixel, i.e. BatchNorm2d (the (B·H·W, C) view); a per-sample norm (LayerNorm, RMSNorm, DyT) normalizes each
image over every unit of the layer, C·H·W of them with a gain and bias per unit, as the LayerNorm paper
defines it (over all the units of a layer, §3), not per pixel over channels. identity = no norm."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from normbench.models.norm import NormLayer
from normbench.norms import get_norm

NO_NORM = "identity"  # the registry's identity: here, no norm layer at all (the LN paper's baseline)
STAGES = 3
CONVS_PER_STAGE = 2


@dataclass(frozen=True)
class CNNConfig:
    norm: str = "batchnorm"
    impl: str | None = None
    width: int = 8  # channels of the first stage
    size: int = 16  # input H = W
    classes: int = 10
    eps: float = 1e-5


class ConvNorm(nn.Module):
    """conv 3×3 (stride 1 or 2) → the norm in its layout → ReLU, on (B, C, H, W)."""

    def __init__(self, cfg: CNNConfig, c_in: int, c_out: int, stride: int, size_out: int, site: str):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1)
        self.per_channel = get_norm(cfg.norm).mixes_tokens
        width = c_out if self.per_channel else c_out * size_out * size_out
        self.norm = None if cfg.norm == NO_NORM else NormLayer(cfg.norm, cfg.impl, width, cfg.eps, site)

    def forward(self, x):
        h = self.conv(x)  # (B, C, H, W)
        B, C, H, W = h.shape
        if self.norm is None:
            y = h
        elif self.per_channel:  # (B, H·W, C): statistics per channel over batch × pixels
            y = self.norm(h.permute(0, 2, 3, 1).reshape(B, H * W, C)).reshape(B, H, W, C).permute(0, 3, 1, 2)
        else:  # (B, 1, C·H·W): each image over all of the layer's units
            y = self.norm(h.reshape(B, 1, C * H * W)).reshape(B, C, H, W)
        return torch.relu(y)


class SmallCNN(nn.Module):
    def __init__(self, cfg: CNNConfig):
        super().__init__()
        self.cfg = cfg
        layers, c_in, size = [], 3, cfg.size
        for stage in range(1, STAGES + 1):
            c_out = cfg.width * 2 ** (stage - 1)
            for k in range(1, CONVS_PER_STAGE + 1):
                stride = 2 if stage > 1 and k == 1 else 1
                size = size // stride
                layers.append(ConvNorm(cfg, c_in, c_out, stride, size, f"{len(layers) + 1}.conv"))
                c_in = c_out
        self.blocks = nn.ModuleList(layers)  # `blocks`: what the fluctuation recorder counts layers by
        self.head = nn.Linear(c_in, cfg.classes)

    def forward(self, x, targets=None):
        """Logits (B, classes), or with targets the mean cross-entropy in nats."""
        for block in self.blocks:
            x = block(x)
        logits = self.head(x.mean((2, 3)))  # global average pool
        if targets is None:
            return logits
        return nn.functional.cross_entropy(logits, targets)

    def norms(self) -> list[NormLayer]:
        return [m for m in self.modules() if isinstance(m, NormLayer)]
