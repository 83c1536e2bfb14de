"""batchnorm:official runs the PowerNorm authors' BatchNorm (sIncerass/powernorm MaskSyncBatchNorm, as
NormSelect("batch") builds it): per-token RMS scaling, padding filled with the real tokens' mean, momentum 0.05;
outputs, gradients and running statistics match a literal transcription of their forward on a padded batch."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from normbench.models.norm import NormLayer
from normbench.norms import get_norm

EPS = 1e-5


def their_forward(x_tbc, pad_mask, weight, bias, running_mean, running_var):
    """mask_syncbatchnorm.py's forward as written (T x B x C input, B x T pad mask, True = padding)."""
    moment2 = torch.mean(x_tbc * x_tbc, dim=2, keepdim=True)
    inp = x_tbc / torch.sqrt(moment2 + 1e-5)  # LayerScaling1D
    T, B, C = inp.shape
    bn_mask = (~pad_mask).transpose(0, 1)
    pad_size = (~bn_mask).sum()
    mask_input = inp.clone()
    mask_input[~bn_mask, :] = inp[bn_mask, :].mean(dim=0).clone().unsqueeze(0).repeat(pad_size, 1)
    mask_input = mask_input.contiguous().view(T * B, C)
    z = F.batch_norm(mask_input, running_mean, running_var, weight, bias, True, 0.05, EPS)
    return z.view(T, B, C)


def _batch():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, 8, generator=g, dtype=torch.float64) * 2 + 0.5  # (B, T, C)
    lengths = torch.tensor([5, 2, 3])
    pad = torch.arange(5)[None, :] >= lengths[:, None]
    return x, pad


def test_official_matches_their_code_on_a_padded_batch():
    x, pad = _batch()
    layer = NormLayer("batchnorm", "official", 8, EPS, "1.attn").double().train()
    with torch.no_grad():
        layer.inner.weight.copy_(torch.linspace(0.5, 1.5, 8))
        layer.inner.bias.copy_(torch.linspace(-0.2, 0.2, 8))
    xa = x.clone().requires_grad_(True)
    ya = layer(xa, pad_mask=pad)

    w = layer.inner.weight.detach().clone().requires_grad_(True)
    b = layer.inner.bias.detach().clone().requires_grad_(True)
    rm, rv = torch.zeros(8, dtype=torch.float64), torch.ones(8, dtype=torch.float64)
    xb = x.clone().requires_grad_(True)
    yb = their_forward(xb.transpose(0, 1), pad, w, b, rm, rv).transpose(0, 1)
    real = ~pad
    torch.testing.assert_close(ya[real], yb[real])
    torch.testing.assert_close(layer.inner.running_mean, rm)
    torch.testing.assert_close(layer.inner.running_var, rv)

    dy = (
        torch.randn(x.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
        * real[..., None]
    )
    (ga,) = torch.autograd.grad(ya, xa, dy)
    gb, gw = torch.autograd.grad(yb, [xb, w], dy)
    torch.testing.assert_close(ga, gb)
    (gwa,) = torch.autograd.grad(layer(x, pad_mask=pad), layer.inner.weight, dy)
    torch.testing.assert_close(gwa, gw)


def test_padding_shrinks_the_variance_it_normalizes_with():
    """The filled rows sit at the mean: the variance is the real tokens' × real/all positions."""
    x, pad = _batch()
    official = NormLayer("batchnorm", "official", 8, EPS, "1.attn").double().train()
    with torch.no_grad():
        y = official(x, pad_mask=pad)[~pad]
    share = float((~pad).sum()) / pad.numel()
    var = y.var(0, unbiased=False)  # ≈ 1/share per channel: normalized by a smaller variance
    torch.testing.assert_close(var, torch.full_like(var, 1 / share), rtol=1e-3, atol=1e-3)


def test_reference_and_eval_and_momentum():
    norm = get_norm("batchnorm")
    built = norm.build("official", 8, eps=EPS, dtype=torch.float64, device="cpu")
    m = built.module
    assert m.momentum == 0.05 and norm.eager_impl("official") == "official"
    assert norm.jacobian_closed_form("official") is None
    x = torch.randn(16, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(2)) * 3
    ref = norm.exact("official", x, [p.detach() for p in built.params], built, eps=EPS)
    torch.testing.assert_close(built.fn(x), ref)
    m.eval()
    scaled = x / torch.sqrt(x.square().mean(-1, keepdim=True) + EPS)
    expect = (scaled - m.running_mean) / torch.sqrt(m.running_var + EPS)
    torch.testing.assert_close(built.fn(x), expect)
