"""BatchNorm as the PowerNorm authors ran it: `batchnorm:official`, beside nn.BatchNorm1d (batchnorm.py).

Read from sIncerass/powernorm at commit 1159641: fairseq/modules/norm_select.py (`NormSelect("batch", ...)`
returns `MaskSyncBatchNorm(embed_dim)`, not the `MaskBatchNorm` it imports; that line is commented out) and
fairseq/modules/norms/mask_syncbatchnorm.py (MaskSyncBatchNorm, LayerScaling1D). On (tokens, C) input:

    LayerScaling1D   x ← x / √(mean over the C channels of x² + ε)       per token, every channel at once
    padding          every padded position of the (T, B, C) tensor is filled with the mean of the real
                     tokens' scaled x (a tensor that carries gradient), then
    F.batch_norm     over all T·B positions, real and filled: training = True, momentum 0.05, ε = 1e-5;
                     y = γ ⊙ (x − μ_B)/√(σ²_B + ε) + β, running mean/var ← 0.95·running + 0.05·batch
                     (σ²_B biased to normalize, unbiased for the running average, as F.batch_norm does)
    eval             y = γ ⊙ (LayerScaling(x) − running_mean)/√(running_var + ε) + β

What the filling does: the batch mean is the real tokens' mean, but the variance is taken over every
position, so it is the real tokens' variance × (real / all positions): a batch with a third of its
positions padded normalizes with a variance two thirds of its real one, and the running variance learns
that shrunken value. The model's NormLayer (models/norm.py) hands this module the real tokens and the count
of padded positions (`pad_count`); the filled rows are appended after the real ones (batch_norm does not
depend on row order), and their outputs, which the authors' model never reads, are dropped. `sync_bn` is off
in their code (`need_sync = False`), so one process's batch is the whole batch, as here."""

from __future__ import annotations

from functools import cache

MOMENTUM = 0.05  # MaskSyncBatchNorm's default; NormSelect passes none


def layer_scaling(x, eps: float):
    """LayerScaling1D: every token (row) divided by the root mean square of its C channels."""
    import torch

    return x / torch.sqrt(x.square().mean(-1, keepdim=True) + eps)


def filled_rows(scaled, pad_count: int):
    """The real tokens' rows, then `pad_count` rows of their mean: what F.batch_norm sees."""
    import torch

    if not pad_count:
        return scaled
    return torch.cat([scaled, scaled.mean(0, keepdim=True).expand(pad_count, -1)])


@cache
def official_module_class():
    import torch
    import torch.nn.functional as F
    from torch import nn

    class MaskSyncBatchNormOfficial(nn.Module):
        """MaskSyncBatchNorm's computation on (tokens, C) rows of real tokens, `pad_count` padded positions."""

        fills_padding = True  # NormLayer passes pad_count (models/norm.py)

        def __init__(self, d: int, eps: float = 1e-5, *, device=None, dtype=None):
            super().__init__()
            kw = {"device": device, "dtype": dtype}
            self.eps, self.momentum = eps, MOMENTUM
            self.weight = nn.Parameter(torch.ones(d, **kw))
            self.bias = nn.Parameter(torch.zeros(d, **kw))
            self.register_buffer("running_mean", torch.zeros(d, **kw))
            self.register_buffer("running_var", torch.ones(d, **kw))

        def reset_running_stats(self) -> None:
            self.running_mean.zero_()
            self.running_var.fill_(1)

        def statistics_input(self, x):
            """What the batch statistics run over: the layer-scaled input (for the fluctuation rows)."""
            return layer_scaling(x, self.eps)

        def forward(self, x, pad_count: int = 0):
            flat = layer_scaling(x.reshape(-1, x.shape[-1]), self.eps)
            rows = filled_rows(flat, pad_count) if self.training else flat
            z = F.batch_norm(
                rows, self.running_mean, self.running_var, self.weight, self.bias,
                self.training, self.momentum, self.eps,
            )  # fmt: skip
            return z[: flat.shape[0]].reshape(x.shape)

        def extra_repr(self) -> str:
            return f"{self.weight.shape[0]}, eps={self.eps:g}, momentum={self.momentum:g}"

    return MaskSyncBatchNormOfficial


def official_exact(x, params, module, eps, pad_count: int = 0):
    """float64 forward of a train-mode call from the definition: layer scaling, the filled rows' mean and
    biased variance, the real rows normalized with them."""
    import torch

    w, b = params
    rows = filled_rows(layer_scaling(x, eps), pad_count)
    mean = rows.mean(0)
    var = (rows - mean).square().mean(0)
    if not module.training:
        mean, var = module.running_mean.detach().double(), module.running_var.detach().double()
    return ((rows - mean) / torch.sqrt(var + eps) * w + b)[: x.shape[0]]
