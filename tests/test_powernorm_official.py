"""powernorm:official runs the authors' code (sIncerass/powernorm mask_powernorm.py) as written: GroupScaling
by heads, batch statistics while t ≤ warm-up then the running ψ², the cumulative-then-EMA ψ² update, and
their backward (batch √(ψ_B²+ε), ν with (1−α) in front) — checked against a float64 re-implementation over
steps that cross the warm-up; a model ties it to its heads and the training loop to its lr warm-up, except
in official_final1000 the encoder's final norm, which keeps NormSelect's 1000-call warm-up as their model does."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from normbench.norms import get_norm

F64 = torch.float64
EPS, ALPHA = 1e-5, 0.9


class Official:
    """mask_powernorm.py's PowerFunction on (tokens, C), written from the file in float64."""

    def __init__(self, c, groups, warmup):
        self.phi, self.ema, self.t = torch.ones(c, dtype=F64), torch.zeros(c, dtype=F64), 0
        self.groups, self.warmup = groups, warmup

    def step(self, x, w, b, dy):
        self.t += 1
        n, c = x.shape
        xr = x.detach().clone().requires_grad_(True)
        g = xr.reshape(n, self.groups, c // self.groups)
        gs = (g / torch.sqrt((g * g).mean(-1, keepdim=True) + EPS)).reshape(n, c)  # GroupScaling1D
        var = (gs.detach() ** 2).mean(0)
        z = gs.detach() / torch.sqrt((var if self.t <= self.warmup else self.phi) + EPS)
        if self.t < self.warmup:
            self.phi = self.phi * (self.t - 1) / self.t + var / self.t
        self.phi = ALPHA * self.phi + (1 - ALPHA) * var
        gg = dy * w
        approx = gg - (1 - ALPHA) * self.ema * z
        self.ema = self.ema + (approx * z).mean(0)
        (dx,) = torch.autograd.grad(gs, xr, approx / torch.sqrt(var + EPS))
        return w * z + b, dx, (dy * z).sum(0), dy.sum(0)


def test_official_steps_match_the_authors_equations_across_the_warmup():
    c, n, groups, warmup = 8, 12, 2, 3
    built = get_norm("powernorm").build("official", c, eps=EPS, dtype=F64, device="cpu")
    m = built.module
    m.tie_to_model(heads=groups)
    m.follow_lr_warmup(warmup)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        m.weight.copy_(1 + 0.3 * torch.randn(c, generator=gen, dtype=F64))
        m.bias.copy_(0.2 * torch.randn(c, generator=gen, dtype=F64))
    ref = Official(c, groups, warmup)
    for step in range(6):  # t = 1..3 batch statistics, 4..6 the running ψ²
        x = (2.0 + step) * torch.randn(n, c, generator=gen, dtype=F64) + 0.5
        dy = torch.randn(n, c, generator=gen, dtype=F64)
        expected_ref = get_norm("powernorm").exact(
            "official", x, [m.weight.detach(), m.bias.detach()], built, eps=EPS
        )
        want_grads = get_norm("powernorm").exact_grads(
            "official", x, dy, [m.weight.detach(), m.bias.detach()], built, eps=EPS
        )
        xg = x.clone().requires_grad_(True)
        m.weight.grad = m.bias.grad = None
        y = m(xg)
        y.backward(dy)
        want = ref.step(x, m.weight.detach(), m.bias.detach(), dy)
        for got, exp in zip((y, xg.grad, m.weight.grad, m.bias.grad), want, strict=True):
            torch.testing.assert_close(got, exp, rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(expected_ref, want[0], rtol=1e-10, atol=1e-12)  # the registry's reference
        torch.testing.assert_close(want_grads["dx"], want[1], rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(m.running_phi, ref.phi, rtol=1e-12, atol=1e-14)
        torch.testing.assert_close(m.ema_gz, ref.ema, rtol=1e-10, atol=1e-12)


def test_a_model_ties_groups_to_heads_and_training_to_the_lr_warmup():
    from normbench.benches._lm.training import TrainSpec, train
    from normbench.data import load_data
    from normbench.models import ModelConfig, TransformerLM

    data = load_data("markov", seed=1)
    torch.manual_seed(0)
    cfg = ModelConfig(
        vocab=data.vocab,
        depth=1,
        d=16,
        heads=4,
        ffn=32,
        seq=8,
        placement="pre",
        norm="powernorm",
        impl="official",
        objective="masked",
    )
    model = TransformerLM(cfg)
    inner = [n.inner for n in model.norms()]
    assert {m.groups for m in inner} == {4}
    spec = TrainSpec(
        lr=1e-3, warmup=5, steps=3, every=1, batch=4, seq=8, data_seed=1, eval_batches=1, objective="masked"
    )
    train(model, data, spec)
    assert {m.warmup_iters for m in inner} == {5} and {int(m.iters) for m in inner} >= {3}
    # official_final1000: the encoder's final norm keeps NormSelect's 1000 calls, as the authors build it
    torch.manual_seed(0)
    literal = TransformerLM(dataclasses.replace(cfg, impl="official_final1000"))
    train(literal, data, spec)
    assert {n.inner.warmup_iters for n in literal.norms() if n.site != "final"} == {5}
    assert literal.final_norm.inner.warmup_iters == 1000


def test_the_literal_final_norm_uses_batch_statistics_past_the_lr_warmup():
    """After the lr warm-up a block norm normalizes with its running ψ²; official_final1000's final norm
    still with the batch's own (NormSelect's 1000 calls), official's final norm like the block norms."""
    from normbench.norms._powernorm_official import group_scaling

    def module(impl, final):
        m = get_norm("powernorm").build(impl, 8, eps=EPS, dtype=F64, device="cpu").module
        m.tie_to_model(heads=1, final=final)
        m.follow_lr_warmup(2)
        m.running_phi.fill_(4.0)
        m.iters.fill_(5)  # past the lr warm-up
        return m

    x = torch.randn(32, 8, dtype=F64, generator=torch.Generator().manual_seed(0))
    z = group_scaling(x, 1, EPS)
    running, batch = (
        z / torch.sqrt(torch.tensor(4.0 + EPS, dtype=F64)),
        z / torch.sqrt(z.square().mean(0) + EPS),
    )
    torch.testing.assert_close(module("official", False)(x), running)
    torch.testing.assert_close(module("official", True)(x), running)
    torch.testing.assert_close(module("official_final1000", False)(x), running)
    torch.testing.assert_close(module("official_final1000", True)(x), batch)


def test_results_name_the_official_implementation_apart():
    from normbench.norms import variant_label

    assert variant_label("powernorm", "official") == "powernorm:official"
    assert variant_label("powernorm", "train") == "powernorm"  # the model default: Algorithm 1
    assert variant_label("layernorm", "module") == "layernorm"
    assert variant_label("powernorm", "module") == "powernorm"  # not one of its impls: the default


def test_the_nu_probe_records_the_subtracted_share_of_each_backward():
    """nu_shares gets ‖(1−α)ν ⊙ z‖ / ‖γ ⊙ ∂L/∂y‖ per call, from the ν the call starts with (0 at the first)."""
    c = 8
    built = get_norm("powernorm").build("official", c, eps=EPS, dtype=F64, device="cpu")
    m = built.module
    m.nu_shares = []
    ref = Official(c, 1, 0)
    g = torch.Generator().manual_seed(5)
    w = m.weight.detach()
    for _ in range(3):
        x = torch.randn(32, c, generator=g, dtype=F64)
        dy = torch.randn(32, c, generator=g, dtype=F64)
        nu, phi = ref.ema.clone(), ref.phi.clone()
        z = x / torch.sqrt(x.square().mean(-1, keepdim=True) + EPS) / torch.sqrt(phi + EPS)
        expect = float(((1 - ALPHA) * nu * z).norm() / (dy * w).norm())
        m(x.requires_grad_(True)).backward(dy)
        ref.step(x.detach(), w, m.bias.detach(), dy)
        assert float(m.nu_shares[-1]) == pytest.approx(expect, rel=1e-9, abs=1e-15)
    assert float(m.nu_shares[0]) == 0.0 and len(m.nu_shares) == 3
