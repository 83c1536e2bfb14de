"""The stability model implements DeepNorm's alpha/beta, the 1/k_l Post-LN-init and each placement's equation exactly."""

import math

import pytest
import torch
import torch.nn.functional as F

from normbench.benches import _lm
from normbench.models import transformer as tf
from normbench.models.transformer import ModelConfig, TransformerLM


def make(**kw):
    torch.manual_seed(kw.pop("seed", 0))
    return TransformerLM(
        ModelConfig(**{"vocab": 11, "depth": 3, "d": 16, "heads": 2, "ffn": 32, "seq": 8, **kw})
    )


def linears(block):
    a, f = block.attn, block.ffn
    return {
        "q_proj": a.q_proj,
        "k_proj": a.k_proj,
        "v_proj": a.v_proj,
        "out_proj": a.out_proj,
        "fc1": f.fc1,
        "fc2": f.fc2,
    }


def test_deepnorm_constants_match_the_paper_table():
    # DeepNet (Wang et al. 2022), decoder-only: alpha = (2M)^(1/4), beta = (8M)^(-1/4); the values below to 3
    # digits (0.320 for M=12 is 96^(-1/4) = 0.31947 rounded up, hence the 1e-3)
    for m, alpha, beta in [(6, 1.861, 0.380), (12, 2.213, 0.320), (24, 2.632, 0.269), (100, 3.761, 0.188)]:
        assert tf.deepnorm_alpha(m) == pytest.approx(alpha, abs=1e-3)
        assert tf.deepnorm_beta(m) == pytest.approx(beta, abs=1e-3)
    assert tf.deepnorm_alpha(12) == 24**0.25 and tf.deepnorm_beta(12) == 96**-0.25


def test_deepnorm_beta_touches_v_out_fc1_fc2_only():
    depth = 4
    ref, deep = make(depth=depth, init="xavier"), make(depth=depth, init="deepnorm")
    beta = (8 * depth) ** -0.25
    for b_ref, b_deep in zip(ref.blocks, deep.blocks, strict=True):
        for name, lin in linears(b_deep).items():
            scale = beta if name in ("v_proj", "out_proj", "fc1", "fc2") else 1.0
            torch.testing.assert_close(lin.weight, scale * linears(b_ref)[name].weight, rtol=1e-6, atol=0)
            assert torch.count_nonzero(lin.bias) == 0
    torch.testing.assert_close(deep.tok_emb.weight, ref.tok_emb.weight)
    torch.testing.assert_close(deep.head.weight, ref.head.weight)


def test_xavier_normal_std_is_gain_times_sqrt_2_over_fans():
    model = make(d=64, ffn=256, depth=1)
    w = model.blocks[0].ffn.fc1.weight
    assert w.std().item() == pytest.approx(tf.xavier_std(64, 256), rel=0.03)


def test_depth_scaled_divides_layer_l_by_n_plus_1_minus_l():
    depth = 5
    ref, scaled = make(depth=depth, init="xavier"), make(depth=depth, init="depth_scaled")
    for layer, (b_ref, b_s) in enumerate(zip(ref.blocks, scaled.blocks, strict=True), start=1):
        k = depth + 1 - layer
        assert tf.depth_scale(layer, depth) == 1 / k
        for name, lin in linears(b_s).items():
            torch.testing.assert_close(lin.weight, linears(b_ref)[name].weight / k, rtol=1e-6, atol=0)
    assert scaled.blocks[-1].ffn.fc2.weight.equal(
        ref.blocks[-1].ffn.fc2.weight
    )  # k_N = 1: top layer unscaled


def test_post_and_deepnorm_block_equations():
    for placement in ("post", "deepnorm"):
        model = make(placement=placement, depth=6)
        alpha = (2 * 6) ** 0.25 if placement == "deepnorm" else 1.0
        block = model.blocks[2]
        assert block.alpha == alpha
        x = torch.randn(2, 8, 16)
        h = F.layer_norm(alpha * x + block.attn(x), (16,), eps=1e-5)
        want = F.layer_norm(alpha * h + block.ffn(h), (16,), eps=1e-5)
        torch.testing.assert_close(block(x), want)
        assert model.final_norm is None


def test_pre_ln_has_a_final_norm_feeding_the_head():
    pre, post = make(placement="pre"), make(placement="post")
    assert pre.final_norm is not None and pre.last_norm() is pre.final_norm
    assert post.final_norm is None and post.last_norm() is post.blocks[-1].ln_ffn
    idx = torch.randint(11, (2, 8))
    stream = []
    h = pre.head_input(idx, stream)
    torch.testing.assert_close(h, F.layer_norm(stream[-1], (16,), eps=1e-5))
    block, x = pre.blocks[0], stream[0]
    mid = x + block.attn(F.layer_norm(x, (16,), eps=1e-5))
    torch.testing.assert_close(stream[1], mid + block.ffn(F.layer_norm(mid, (16,), eps=1e-5)))


def test_sandwich_normalizes_each_branch_output():
    model = make(placement="sandwich")
    block, x = model.blocks[0], torch.randn(2, 8, 16)
    ln = lambda t: F.layer_norm(t, (16,), eps=1e-5)  # noqa: E731
    mid = x + ln(block.attn(ln(x)))
    torch.testing.assert_close(block(x), mid + ln(block.ffn(ln(mid))))
    assert model.final_norm is not None


def test_norm_comes_from_the_registry():
    model = make(norm="rmsnorm")
    assert all(isinstance(m.inner, torch.nn.RMSNorm) for m in model.norms())
    assert len(model.norms()) == 2 * 3


def test_attention_is_causal():
    model = make(placement="pre")
    idx = torch.randint(11, (1, 8))
    changed = idx.clone()
    changed[0, 5:] = (changed[0, 5:] + 1) % 11
    torch.testing.assert_close(model(idx)[0, :5], model(changed)[0, :5])


def test_torch_free_choice_lists_match_the_model():
    assert _lm.PLACEMENTS == tf.PLACEMENTS and _lm.INITS == tf.INITS
    assert math.isclose(tf.deepnorm_alpha(1), 2**0.25)
