"""The encoder-decoder uses DeepNet Table 1's encoder-decoder alpha/beta on exactly Alg. 1's matrices, masks padding so it never changes the loss of real tokens, and is causal only in the decoder."""

import math

import pytest
import torch

from normbench.models import weight_init as wi
from normbench.models.encdec import EncDecConfig, EncoderDecoder
from normbench.models.transformer import PLACEMENTS

PAD = 0


def make(seed=0, **kw):
    torch.manual_seed(seed)
    cfg = {"vocab": 11, "enc_depth": 3, "dec_depth": 2, "d": 16, "heads": 2, "ffn": 32, "max_len": 9, **kw}
    return EncoderDecoder(EncDecConfig(**cfg))


@pytest.mark.parametrize("n, m", [(6, 6), (12, 6), (6, 12), (18, 18), (100, 100)])
def test_constants_are_table_1s_formulas(n, m):
    alpha_e, alpha_d = wi.encdec_deepnorm_alpha(n, m)
    beta_e, beta_d = wi.encdec_deepnorm_beta(n, m)
    assert alpha_e == pytest.approx(0.81 * (n**4 * m) ** (1 / 16), rel=1e-12)
    assert beta_e == pytest.approx(0.87 * (n**4 * m) ** (-1 / 16), rel=1e-12)
    assert alpha_d == pytest.approx((3 * m) ** 0.25, rel=1e-12)
    assert beta_d == pytest.approx((12 * m) ** -0.25, rel=1e-12)


def test_constants_worked_values():
    # 6L-6L by hand: (6^5)^(1/16) = 6^0.3125 = 1.75053; alpha_d = 18^(1/4), beta_d = 72^(-1/4)
    assert wi.encdec_deepnorm_alpha(6, 6) == pytest.approx((1.4179, 2.0598), abs=1e-4)
    assert wi.encdec_deepnorm_beta(6, 6) == pytest.approx((0.4970, 0.3433), abs=1e-4)
    # 0.81 and 0.87 are the table's roundings of 27^(-1/16) and 27^(1/16)/sqrt(2)
    assert 27 ** (-1 / 16) == pytest.approx(0.81, abs=0.005) and 27 ** (1 / 16) / math.sqrt(
        2
    ) == pytest.approx(0.87, abs=0.005)


def test_model_uses_alpha_e_in_the_encoder_and_alpha_d_in_all_three_decoder_sublayers():
    model = make(placement="deepnorm")
    alpha_e, alpha_d = wi.encdec_deepnorm_alpha(3, 2)
    assert {layer.alpha for layer in model.encoder} == {alpha_e}
    assert {layer.alpha for layer in model.decoder} == {alpha_d}
    assert {layer.alpha for layer in make(placement="post").decoder} == {1.0}
    x = torch.randn(2, 5, 16)
    memory = torch.randn(2, 4, 16)
    layer = model.decoder[0]
    with torch.no_grad():
        y = layer.ln_attn(alpha_d * x + layer.attn(x))
        y = layer.ln_cross(alpha_d * y + layer.cross(y, kv=memory))
        y = layer.ln_ffn(alpha_d * y + layer.ffn(y))  # DeepNet §4.1: LN(alpha x + G(x)) on every sub-layer
        torch.testing.assert_close(layer(x, memory, None, None), y)


def test_beta_lands_on_v_out_fc1_fc2_and_cross_v_out_only():
    ref, deep = make(seed=3, init="xavier"), make(seed=3, init="deepnorm")  # same draws, different gains
    beta_e, beta_d = wi.encdec_deepnorm_beta(3, 2)
    scaled = ("v_proj", "out_proj", "fc1", "fc2", "cross.v_proj", "cross.out_proj")
    for stack_ref, stack_deep, beta in (
        (ref.encoder, deep.encoder, beta_e),
        (ref.decoder, deep.decoder, beta_d),
    ):
        for a, b in zip(stack_ref, stack_deep, strict=True):
            for name, lin in b.linears().items():
                want = (beta if name in scaled else 1.0) * a.linears()[name].weight
                torch.testing.assert_close(lin.weight, want, rtol=1e-6, atol=0)
                assert torch.count_nonzero(lin.bias) == 0
    assert set(deep.decoder[0].linears()) == {"q_proj", "k_proj", "v_proj", "out_proj", "fc1", "fc2"} | {
        "cross.q_proj",
        "cross.k_proj",
        "cross.v_proj",
        "cross.out_proj",
    }
    torch.testing.assert_close(deep.head.weight, ref.head.weight)


def test_magneto_leaves_the_cross_attention_unscaled_and_depth_scaled_counts_each_stack():
    gains = wi.encdec_weight_gains("magneto", "dec", 1, 3, 2)
    assert gains["cross.v_proj"] == gains["cross.out_proj"] == 1.0
    assert gains["fc1"] == pytest.approx(math.sqrt(math.log(6)))
    assert wi.encdec_weight_gains("magneto", "enc", 1, 3, 2)["v_proj"] == pytest.approx(
        math.sqrt(math.log(6) * math.log(6) / 3)
    )
    # 1/k_l with k_l = n + 1 - l inside each stack: encoder layer 1 of 3 -> 1/3, decoder layer 1 of 2 -> 1/2
    assert wi.encdec_weight_gains("depth_scaled", "enc", 1, 3, 2)["q_proj"] == pytest.approx(1 / 3)
    assert wi.encdec_weight_gains("depth_scaled", "dec", 1, 3, 2)["cross.q_proj"] == pytest.approx(1 / 2)
    assert wi.encdec_weight_gains("depth_scaled_keep_qk", "dec", 1, 3, 2)["cross.k_proj"] == 1.0


def _pair_loss(model, src, tgt_in, tgt, src_pad=None, tgt_pad=None):
    return model(src, tgt_in, tgt, src_pad=src_pad, tgt_pad=tgt_pad)


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_padding_never_changes_the_loss_of_real_tokens(placement):
    model = make(placement=placement).eval()
    src = torch.tensor([[3, 4, 5]])
    tgt_in, tgt = torch.tensor([[1, 6, 7, 8]]), torch.tensor([[6, 7, 8, 2]])
    alone = _pair_loss(model, src, tgt_in, tgt)
    # the same pair padded to a longer pair's length, its PAD slots filled with arbitrary ids
    src_b = torch.tensor([[3, 4, 5, 9, 10, 7], [3, 9, 10, 4, 5, 6]])
    src_pad = torch.tensor([[False] * 3 + [True] * 3, [False] * 6])
    tgt_in_b = torch.tensor([[1, 6, 7, 8, 5, 9, 3], [1, 4, 4, 4, 4, 4, 4]])
    tgt_b = torch.tensor([[6, 7, 8, 2, 4, 4, 4], [4, 4, 4, 4, 4, 4, 2]])
    tgt_pad = torch.tensor([[False] * 4 + [True] * 3, [False] * 7])
    logits = model(src_b, tgt_in_b, src_pad=src_pad, tgt_pad=tgt_pad)
    padded = torch.nn.functional.cross_entropy(logits[0, :4], tgt_b[0, :4])
    torch.testing.assert_close(padded, alone, rtol=1e-5, atol=1e-6)
    assert torch.isfinite(logits).all()  # padded query rows still see real keys: no NaN anywhere


def test_loss_counts_real_target_tokens_only():
    model = make().eval()
    src, src_pad = torch.tensor([[3, 4, 0]]), torch.tensor([[False, False, True]])
    tgt_in, tgt = torch.tensor([[1, 5, 6, 0]]), torch.tensor([[5, 6, 2, 0]])
    tgt_pad = tgt == PAD
    logits = model(src, tgt_in, src_pad=src_pad, tgt_pad=tgt_pad)
    want = torch.nn.functional.cross_entropy(logits[0, :3], tgt[0, :3])
    torch.testing.assert_close(model(src, tgt_in, tgt, src_pad=src_pad, tgt_pad=tgt_pad), want)


def test_decoder_is_causal_and_reads_the_whole_source():
    model = make().eval()
    src, tgt_in = torch.tensor([[3, 4, 5, 6]]), torch.tensor([[1, 7, 8, 9]])
    base = model(src, tgt_in)
    later = model(src, torch.tensor([[1, 7, 8, 10]]))  # the last target input changed
    torch.testing.assert_close(later[:, :3], base[:, :3])
    assert not torch.allclose(later[:, 3], base[:, 3])
    moved = model(
        torch.tensor([[3, 4, 5, 10]]), tgt_in
    )  # the last source token changed: every position sees it
    assert all(not torch.allclose(moved[:, t], base[:, t]) for t in range(4))


def test_every_norm_is_listed_in_forward_order_with_its_side():
    sites = [m.site for m in make(placement="pre").norms()]
    assert sites[:2] == ["enc.1.attn", "enc.1.ffn"] and sites[6] == "enc.final"
    assert sites[7:10] == ["dec.1.attn", "dec.1.cross", "dec.1.ffn"] and sites[-1] == "dec.final"
    assert make(placement="pre").last_norm().site == "dec.final"
    assert make(placement="post").last_norm().site == "dec.2.ffn"
    assert "dec.1.cross_mid" in [
        m.site for m in make(placement="subln").norms()
    ]  # torchscale: subln in cross
