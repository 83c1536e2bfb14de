"""The LM with every norm: every module norm runs in the LM at its width (BatchNorm over batch x time),
Sub-LN and Peri-LN follow their equations (checked against a hand forward), Magneto's gamma lands on
v/out/fc1/fc2 only, and the masked objective is bidirectional, BERT-masked and starts at ~ln V."""

import math

import pytest
import torch
import torch.nn.functional as F

from normbench.benches import _lm
from normbench.core.errors import SuiteError
from normbench.data import mask_tokens
from normbench.models import transformer as tf
from normbench.models.transformer import ModelConfig, TransformerLM
from normbench.suite.load import parse_suite

V, D, FFN_WIDTH = 11, 16, 32


def make(**kw):
    torch.manual_seed(kw.pop("seed", 0))
    return TransformerLM(
        ModelConfig(**{"vocab": V, "depth": 2, "d": D, "heads": 2, "ffn": FFN_WIDTH, "seq": 8, **kw})
    )


def ln(x, eps=1e-5):
    mu = x.mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(((x - mu) ** 2).mean(-1, keepdim=True) + eps)


def heads(a, x, causal=True):
    """softmax(q k^T / sqrt(d_h) [+ causal mask]) v, heads concatenated: the input of out_proj."""
    B, T, d = x.shape
    q, k, v = (
        F.linear(x, p.weight, p.bias).view(B, T, 2, d // 2).transpose(1, 2)
        for p in (a.q_proj, a.k_proj, a.v_proj)
    )
    scores = q @ k.transpose(-1, -2) / math.sqrt(d // 2)
    if causal:
        scores = scores.masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
    return (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, d)


def lin(layer, x):
    return F.linear(x, layer.weight, layer.bias)


def test_choice_lists_match_the_model():
    assert _lm.PLACEMENTS == tf.PLACEMENTS and _lm.INITS == tf.INITS and _lm.OBJECTIVES == tf.OBJECTIVES


@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm", "dyt", "batchnorm"])
def test_every_module_norm_runs_in_the_model(norm):
    objective = "masked" if norm == "batchnorm" else "causal"
    model = make(norm=norm, placement="pre", objective=objective)
    logits = model(torch.randint(V, (3, 8)))
    assert logits.shape == (3, 8, V) and torch.isfinite(logits).all()
    assert len(model.norms()) == 2 * 2 + 1


def test_batchnorm_in_the_model_normalizes_over_batch_times_time_from_fresh_statistics():
    model = make(norm="batchnorm", placement="pre", objective="masked")
    norm = model.blocks[0].ln_attn
    assert norm.flatten and isinstance(norm.inner, torch.nn.BatchNorm1d)
    assert norm.inner.running_mean.eq(0).all() and norm.inner.running_var.eq(1).all()
    x = torch.randn(3, 8, D) * 2 + 1
    flat = x.reshape(24, D)
    expected = (flat - flat.mean(0)) / torch.sqrt(flat.var(0, unbiased=False) + 1e-5)
    torch.testing.assert_close(norm(x), expected.reshape(3, 8, D), rtol=1e-5, atol=1e-5)


def test_subln_adds_an_ln_before_out_proj_and_before_fc2_over_the_ffn_width():
    model = make(placement="subln")
    block, x = model.blocks[0], torch.randn(2, 8, D)
    assert block.ffn.sub_norm.inner.normalized_shape == (FFN_WIDTH,)
    mid = x + lin(block.attn.out_proj, ln(heads(block.attn, ln(x))))
    out = mid + lin(block.ffn.fc2, ln(torch.relu(lin(block.ffn.fc1, ln(mid)))))
    torch.testing.assert_close(block(x), out, rtol=1e-5, atol=1e-5)
    assert [m.site for m in model.norms()][:4] == ["1.attn", "1.attn_mid", "1.ffn", "1.ffn_mid"]
    assert model.final_norm is not None


def test_periln_normalizes_the_embedding_and_both_sides_of_each_sublayer():
    model = make(placement="periln", depth=1)
    idx = torch.randint(V, (2, 8))
    block = model.blocks[0]
    x = ln(model.tok_emb.weight[idx] + model.pos_emb.weight[:8])
    x = x + ln(lin(block.attn.out_proj, heads(block.attn, ln(x))))
    x = x + ln(lin(block.ffn.fc2, torch.relu(lin(block.ffn.fc1, ln(x)))))
    torch.testing.assert_close(model.head_input(idx), ln(x), rtol=1e-5, atol=1e-5)


def test_magneto_gamma_scales_v_out_fc1_fc2_only():
    depth = 3
    ref, mag = make(depth=depth, init="xavier"), make(depth=depth, init="magneto")
    gamma = math.sqrt(math.log(2 * depth))
    assert tf.magneto_gamma(depth) == gamma
    for b_ref, b_mag in zip(ref.blocks, mag.blocks, strict=True):
        for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
            scale = 1.0 if name in ("q_proj", "k_proj") else gamma
            torch.testing.assert_close(
                getattr(b_mag.attn, name).weight, scale * getattr(b_ref.attn, name).weight
            )
        for name in ("fc1", "fc2"):
            torch.testing.assert_close(
                getattr(b_mag.ffn, name).weight, gamma * getattr(b_ref.ffn, name).weight
            )


def test_masked_objective_attends_both_ways_and_has_a_mask_row():
    model = make(placement="pre", objective="masked")
    assert model.tok_emb.num_embeddings == V + 1 and model.head.out_features == V
    idx = torch.randint(V, (1, 8))
    changed = idx.clone()
    changed[0, 6] = V  # [MASK] at a later position changes the earlier outputs
    assert not torch.allclose(model(idx)[0, :5], model(changed)[0, :5])


def test_mask_tokens_follows_80_10_10_and_is_reproducible():
    tokens = torch.randint(V, (64, 512), generator=torch.Generator().manual_seed(0))
    inputs, targets, mask = mask_tokens(tokens, V, 0.15, torch.Generator().manual_seed(3))
    torch.manual_seed(999)  # the global generator plays no part
    again = mask_tokens(tokens, V, 0.15, torch.Generator().manual_seed(3))
    assert all(a.equal(b) for a, b in zip((inputs, targets, mask), again, strict=True))
    n = int(mask.sum())
    assert n / mask.numel() == pytest.approx(0.15, abs=0.005)  # 32768 positions: sd 0.002
    assert targets.equal(tokens) and inputs[~mask].equal(tokens[~mask])
    masked = (inputs[mask] == V).float().mean().item()
    unchanged = (inputs[mask] == tokens[mask]).float().mean().item()  # 10%, plus 1/V of the random 10%
    assert masked == pytest.approx(0.8, abs=0.02) and unchanged == pytest.approx(0.1 + 0.1 / V, abs=0.02)


def test_mask_tokens_chooses_at_least_one_position():
    _, _, mask = mask_tokens(torch.zeros(1, 2, dtype=torch.long), V, 1e-9, torch.Generator().manual_seed(0))
    assert int(mask.sum()) == 1


def test_masked_loss_at_init_is_between_ln_v_and_ln_v_plus_half_the_logit_variance():
    # At init the logits z are independent of the masked targets, so by Jensen (logsumexp convex; log concave)
    # ln V <= E[CE] = E[logsumexp z] - E[z_y] <= ln(V E[e^z]) - 0 = ln V + s^2/2 for z ~ N(0, s^2) per entry;
    # s^2 is measured from the same logits. 8 x 64 windows, ~77 masked positions each: the mean's sd < 0.02.
    torch.manual_seed(0)
    model = TransformerLM(
        ModelConfig(vocab=64, depth=2, d=32, heads=2, ffn=64, seq=64, placement="pre", objective="masked")
    )
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(64, (8 * 64, 64), generator=g)
    inputs, targets, mask = mask_tokens(tokens, 64, 0.15, g)
    with torch.no_grad():
        loss = float(model(inputs, targets, mask=mask))
        s2 = float(model(inputs)[mask].var())
    assert math.log(64) - 0.05 <= loss <= math.log(64) + s2 / 2 + 0.05
    assert 0.1 < s2 < 2  # the bracket is informative, not vacuous


SUITE = 'name = "t"\n[[bench]]\nkind = "{kind}"\nnorms = ["{norm}"]\n[bench.params]\nd = 16\n{extra}'


@pytest.mark.parametrize("kind", ["stability", "init"])
def test_batchnorm_is_refused_with_the_causal_objective_and_says_why(kind):
    with pytest.raises(SuiteError) as info:
        parse_suite(SUITE.format(kind=kind, norm="batchnorm", extra=""))
    message = str(info.value)
    assert "bench[0].norms: batchnorm normalizes over the batch" in message
    assert "tokens after it" in message and 'objective = "masked"' in message
    parse_suite(SUITE.format(kind=kind, norm="batchnorm", extra='objective = "masked"\n'))  # accepted


@pytest.mark.parametrize("value", [0.0, 1.0, 1.5])
def test_mask_prob_outside_the_open_unit_interval_is_refused(value):
    with pytest.raises(SuiteError, match=rf"bench\[0\]\.params\.mask_prob: {value!r} must be in \(0, 1\)"):
        parse_suite(SUITE.format(kind="stability", norm="layernorm", extra=f"mask_prob = {value}\n"))


@pytest.mark.parametrize("placement", tf.PLACEMENTS)
def test_gradient_groups_cover_every_parameter_once(placement):
    from normbench.benches._lm.training import layer_groups

    model = make(placement=placement)
    grouped = [id(p) for _, _, params in layer_groups(model) for p in params]
    assert sorted(grouped) == sorted(id(p) for p in model.parameters())
