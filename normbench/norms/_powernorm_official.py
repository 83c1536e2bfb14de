"""PowerNorm as its authors ran it: `powernorm:official`, beside Algorithm 1 (powernorm.py).

Read from sIncerass/powernorm at commit 1159641: fairseq/modules/norms/mask_powernorm.py (GroupScaling1D,
PowerFunction, MaskPowerNorm), fairseq/modules/norm_select.py and fairseq/modules/transformer_layer.py
(`NormSelect(norm, embed_dim, args.encoder_attention_heads, args.warmup_updates)`: groups = attention
heads, batch-statistics warm-up = the lr warm-up), trans-scripts/train/train-iwslt14.sh
(`--warmup-updates 8000`). Per call t (1-based; `iters` counts train-mode calls), on (tokens, C) input:

    GroupScaling   x ← x / √(mean over its group of x² + ε)     per token, C/groups channels per group
    forward        ψ_B² = mean over tokens of x²               per channel
                   z = x / √(ψ_B² + ε)     while t ≤ warmup     (batch statistics, as BatchNorm)
                   z = x / √(ψ² + ε)       after                (running statistics, Algorithm 1)
                   ψ² ← ψ²·(t−1)/t + ψ_B²/t   while t < warmup  (a cumulative mean first), then always
                   ψ² ← α ψ² + (1−α) ψ_B²
                   y = γ ⊙ z + β
    backward       g = γ ⊙ ∂L/∂y;  g' = g − (1−α) ν ⊙ z;  ν ← ν + mean over tokens of g' ⊙ z
                   ∂L/∂x = g' / √(ψ_B² + ε)   (the *batch* statistics, also after the warm-up)
                   then through GroupScaling by autograd
    eval           y = γ ⊙ GroupScaling(x) / √(ψ² + ε) + β

Where this differs from Algorithm 1 (powernorm.py): the GroupScaling step, the warm-up, the backward's
√(ψ_B² + ε) and (1−α) placement, and ν updated without the (1−α) factor. α = 0.9 for both averages
(MaskPowerNorm's alpha_fwd = alpha_bkw defaults). Built from the registry the module has 1 group and no
warm-up; a model ties it to its heads (`tie_to_model`) and the training loop to its lr warm-up
(`follow_lr_warmup`).

The encoder's final norm: fairseq/models/transformer.py builds it with
`NormSelect(args.encoder_norm_ff, embed_dim, args.encoder_attention_heads)`, without the warm-up argument,
so it takes NormSelect's default `warmup_updates=1000`: batch statistics for its first 1000 calls whatever
the lr warm-up. In their runs (tens of thousands of updates, lr warm-up 8000) that is a short start, after
which every norm uses its running ψ² in training as at inference. In a CPU run of 400-1000 steps, 1000
calls is the whole run: the final norm would train on batch statistics throughout and meet its running
ψ² only at evaluation, a train/inference mismatch their model never has for long (measured in
docs/results.md, "BatchNorm's premise": +0.10 nats against BatchNorm at 400 steps). So `official` ties the
final norm to the lr warm-up like the block norms (the stated choice), and `official_final1000` keeps the
literal 1000 calls (`tie_to_model(final=True)` with `literal_final`), to measure what the literal reading
does.

The ν probe: with `nu_shares` set to a list, every backward appends ‖(1−α)ν ⊙ z‖ / ‖g‖, the share of the
gradient the subtracted term is (the stability bench's `pn_nu_share` rows; docs/results.md, "BatchNorm's
premise"). ν is a running sum of per-token gradient means, so its scale follows the gradient per token,
which is ∝ 1/(counted tokens) of the batches that built it; where batches vary in size it mismatches the
current batch's g.

Padding: MaskPowerNorm computes ψ_B² over the real tokens (`mask_x`, from `pad_mask`). The model's
NormLayer gives this module the real tokens only (models/norm.py), so ψ_B² is theirs; their backward
averages ν's update over every position of the padded tensor (a padded position has g = 0 but z ≠ 0, so it
adds −(1−α)ν z² there). Here the backward's averages also run over the real tokens: what a padded
position contributes in their code depends on the values padding happens to carry, which is not part of
the method."""

from __future__ import annotations

from functools import cache

ALPHA = 0.9
FINAL_WARMUP = 1000  # NormSelect's default warmup_updates, which the encoder's final norm gets


def group_scaling(x, groups: int, eps: float):
    """GroupScaling1D: every token divided by the root mean square of its group of C/groups channels."""
    import torch

    n, c = x.shape
    g = x.reshape(n, groups, c // groups)
    return (g / torch.sqrt(g.square().mean(-1, keepdim=True) + eps)).reshape(n, c)


@cache
def official_function():
    import torch

    class OfficialPowerFunction(torch.autograd.Function):
        @staticmethod
        def forward(
            ctx,
            x,
            weight,
            bias,
            running_phi,
            ema_gz,
            t: int,
            warmup: int,
            alpha: float,
            eps: float,
            shares=None,
        ):
            stat = torch.promote_types(x.dtype, torch.float32)
            var = x.to(stat).square().mean(0)  # ψ_B²
            scale = var if t <= warmup else running_phi.to(stat)
            z = (x.to(stat) / torch.sqrt(scale + eps)).to(x.dtype)
            with torch.no_grad():
                if t < warmup:  # cumulative mean of the batch statistics during the warm-up
                    running_phi.copy_(running_phi * (t - 1) / t + var.to(running_phi.dtype) / t)
                running_phi.mul_(alpha).add_((1 - alpha) * var.to(running_phi.dtype))
            ctx.save_for_backward(z, var, weight)
            ctx.ema_gz, ctx.alpha, ctx.eps, ctx.shares = ema_gz, alpha, eps, shares
            return weight * z + bias

        @staticmethod
        def backward(ctx, grad_y):
            z, var, weight = ctx.saved_tensors
            g = grad_y * weight
            subtracted = (1 - ctx.alpha) * ctx.ema_gz.to(z.dtype) * z
            approx = g - subtracted  # g' = g − (1−α) ν ⊙ z
            if ctx.shares is not None:  # the ν probe: ‖(1−α)ν ⊙ z‖ / ‖g‖ of this call
                ctx.shares.append((subtracted.norm() / g.norm().clamp_min(1e-30)).detach())
            with torch.no_grad():
                ctx.ema_gz.add_((approx * z).mean(0).to(ctx.ema_gz.dtype))  # ν ← ν + mean(g' ⊙ z)
            grad_x = approx / torch.sqrt(var + ctx.eps).to(z.dtype)  # the batch's √(ψ_B² + ε)
            return grad_x, (grad_y * z).sum(0), grad_y.sum(0), None, None, None, None, None, None, None

    return OfficialPowerFunction


@cache
def official_module_class():
    import torch
    from torch import nn

    class PowerNormOfficial(nn.Module):
        """MaskPowerNorm's computation over the last dim of (tokens, C); statistics over every token."""

        def __init__(self, d: int, eps: float = 1e-5, *, device=None, dtype=None):
            super().__init__()
            kw = {"device": device, "dtype": dtype}
            self.eps, self.alpha, self.groups, self.warmup_iters = eps, ALPHA, 1, 0
            self.literal_final = False  # official_final1000: the final norm keeps NormSelect's 1000 calls
            self.final = False
            self.weight = nn.Parameter(torch.ones(d, **kw))
            self.bias = nn.Parameter(torch.zeros(d, **kw))
            self.register_buffer("running_phi", torch.ones(d, **kw))  # ψ²
            self.register_buffer("ema_gz", torch.zeros(d, **kw))  # ν, the backward's running average
            self.register_buffer("iters", torch.zeros((), dtype=torch.long, device=device))
            self.nu_shares: list | None = None  # a list: every backward appends its ν share (the ν probe)

        def tie_to_model(self, *, heads: int, final: bool = False) -> None:
            """groups = attention heads (norm_select.py), where the heads divide the width; with
            literal_final, the encoder's final norm keeps NormSelect's 1000-call warm-up."""
            self.groups = heads if self.weight.shape[0] % heads == 0 else 1
            self.final = final and self.literal_final
            if self.final:
                self.warmup_iters = FINAL_WARMUP

        def follow_lr_warmup(self, steps: int) -> None:
            """Batch statistics for the first `steps` calls (transformer_layer.py passes --warmup-updates);
            not for a literal final norm, which their code builds without it."""
            if not self.final:
                self.warmup_iters = steps

        def statistics_input(self, x):
            """What ψ_B² is computed over: the group-scaled input (for the fluctuation rows)."""
            return group_scaling(x, self.groups, self.eps)

        def forward(self, x):
            flat = group_scaling(x.reshape(-1, x.shape[-1]), self.groups, self.eps)
            if self.training:
                self.iters += 1
                y = official_function().apply(
                    flat,
                    self.weight,
                    self.bias,
                    self.running_phi,
                    self.ema_gz,
                    int(self.iters),
                    self.warmup_iters,
                    self.alpha,
                    self.eps,
                    self.nu_shares,
                )
            else:
                y = flat * torch.rsqrt(self.running_phi + self.eps) * self.weight + self.bias
            return y.reshape(x.shape)

        def extra_repr(self) -> str:
            return (
                f"{self.weight.shape[0]}, eps={self.eps:g}, groups={self.groups}, warmup={self.warmup_iters}"
            )

    return PowerNormOfficial


def official_exact(x, params, module, eps):
    """float64 forward of the next train-mode call (t = iters + 1) from the module's state."""
    import torch

    w, b = params
    z = group_scaling(x, module.groups, eps)
    t = int(module.iters) + 1
    scale = z.square().mean(0) if t <= module.warmup_iters else module.running_phi.detach().double()
    return z / torch.sqrt(scale + eps) * w + b


def official_exact_grads(x, dy, params, module, eps):
    """float64 gradients of the next train-mode call: their approximate backward, then autograd through
    GroupScaling."""
    import torch

    w, _ = params
    x = x.detach().requires_grad_(True)
    with torch.enable_grad():
        z0 = group_scaling(x, module.groups, eps)
    zd = z0.detach()
    var = zd.square().mean(0)
    t = int(module.iters) + 1
    scale = var if t <= module.warmup_iters else module.running_phi.detach().double()
    z = zd / torch.sqrt(scale + eps)
    approx = dy * w - (1 - module.alpha) * module.ema_gz.detach().double() * z
    (dx,) = torch.autograd.grad(z0, x, approx / torch.sqrt(var + eps))
    return {"dx": dx, "dweight": (dy * z).sum(0), "dbias": dy.sum(0)}
