"""BatchNorm and PowerNorm go in the encoder of the encoder-decoder (the decoder keeps LayerNorm), with
statistics over real source tokens: padding never changes a real token's loss; the bench allows it (not with
Sub-LN) and batches pairs under fairseq's token budget."""

from __future__ import annotations

import pytest
import torch

from normbench.models.encdec import EncDecConfig, EncoderDecoder

PAD = 0


def make(norm, impl=None, placement="pre"):
    torch.manual_seed(0)
    cfg = EncDecConfig(
        vocab=11, enc_depth=2, dec_depth=2, d=16, heads=2, ffn=32, max_len=9, placement=placement,
        norm=norm, impl=impl, dec_norm="layernorm",
    )  # fmt: skip
    return EncoderDecoder(cfg)


@pytest.mark.parametrize(
    "norm, impl", [("batchnorm", None), ("batchnorm", "official"), ("powernorm", "official")]
)
@pytest.mark.parametrize("placement", ["pre", "post"])
def test_batch_norms_in_the_encoder_see_only_real_source_tokens(norm, impl, placement):
    model = make(norm, impl, placement).train()
    enc = {m.inner.__class__.__name__ for m in model.norms() if m.site.startswith("enc.")}
    dec = {m.inner.__class__.__name__ for m in model.norms() if m.site.startswith("dec.")}
    assert dec == {"LayerNorm"} and "LayerNorm" not in enc
    src = torch.tensor([[3, 4, 5, 6], [7, 8, PAD, PAD]])
    src_pad = src == PAD
    tgt_in, tgt = torch.tensor([[1, 3, 4], [1, 5, PAD]]), torch.tensor([[3, 4, 2], [5, 2, PAD]])
    tgt_pad = tgt == PAD
    state = {k: v.clone() for k, v in model.state_dict().items()}
    loss = model(src, tgt_in, tgt, src_pad=src_pad, tgt_pad=tgt_pad)
    # other ids at the padded source positions: the same loss (and the same running statistics)
    after = {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(state)
    other = src.masked_fill(src_pad, 9)
    again = model(other, tgt_in, tgt, src_pad=src_pad, tgt_pad=tgt_pad)
    torch.testing.assert_close(loss, again)
    for k, v in model.state_dict().items():
        torch.testing.assert_close(v, after[k])


def test_the_bench_allows_batch_norms_in_the_encoder_but_not_with_subln():
    from normbench.benches import get_bench

    bench = get_bench("encdec")
    p = {k: v.default for k, v in bench.params.items()} | {"placement": "pre"}
    assert bench.check_case(p, "batchnorm", "official") == []
    assert bench.check_case(p | {"max_tokens": 256}, "powernorm", "official") == []
    assert bench.check_case(p | {"placement": "subln"}, "batchnorm", None)[0][0] == "placement"
    assert bench.check_case(p | {"max_tokens": 8}, "layernorm", None)[0][0] == "max_tokens"


def test_pairs_batch_under_a_token_budget_in_length_order():
    from normbench.benches._encdec.training import pair_batches
    from normbench.data.seq2seq_pairs import generate_pairs

    data = generate_pairs("translate", 32, 4, 16, 1234)
    stream = pair_batches(data.train_src, data.train_tgt, 16, 1234, max_tokens=256)
    rows = []
    for _ in range(50):
        b = next(stream)
        longest = max(b.src.shape[1], b.tgt.shape[1])
        assert len(b.src) * longest <= 256
        rows.append(len(b.src))
    assert max(rows) > min(rows)  # rows vary with length: shorter pairs, more of them
