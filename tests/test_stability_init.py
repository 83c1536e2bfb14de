"""The init bench's per-layer metrics equal a hand computation (an independent functional forward) on 2-layer models."""

import math

import pytest
import torch
import torch.nn.functional as F

from normbench.benches.init import init_rows
from normbench.data import load_data, sample_windows
from normbench.models.transformer import ModelConfig, TransformerLM

P = {"data_seed": 5, "batches": 3, "batch": 4, "seq": 8, "device": "cpu", "jacobian_tokens": 16}
D = 16


def ln(x, eps=1e-5):
    mu = x.mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(((x - mu) ** 2).mean(-1, keepdim=True) + eps)


def attention(a, x, heads=2):
    """Causal softmax attention written out: softmax(q k^T / sqrt(d_h) + mask) v, heads concatenated."""
    B, T, d = x.shape
    q, k, v = (
        F.linear(x, p.weight, p.bias).view(B, T, heads, d // heads).transpose(1, 2)
        for p in (a.q_proj, a.k_proj, a.v_proj)
    )
    scores = q @ k.transpose(-1, -2) / math.sqrt(d // heads)
    scores = scores.masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
    return F.linear(
        (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, d), a.out_proj.weight, a.out_proj.bias
    )


def ffn(f, x):
    return F.linear(torch.relu(F.linear(x, f.fc1.weight, f.fc1.bias)), f.fc2.weight, f.fc2.bias)


def hand_forward(model, idx, placement):
    """(logits, stream x_0..x_N, inputs of every LN in forward order), with no model code reused."""
    x = model.tok_emb.weight[idx] + model.pos_emb.weight[: idx.shape[1]]
    stream, ln_inputs = [x], []
    for b in model.blocks:
        if placement == "pre":
            ln_inputs.append(x)
            x = x + attention(b.attn, ln(x))
            ln_inputs.append(x)
            x = x + ffn(b.ffn, ln(x))
        else:
            ln_inputs.append(x + attention(b.attn, x))
            x = ln(ln_inputs[-1])
            ln_inputs.append(x + ffn(b.ffn, x))
            x = ln(ln_inputs[-1])
        stream.append(x)
    if placement == "pre":
        ln_inputs.append(x)
        x = ln(x)
    return x @ model.head.weight.T, stream, ln_inputs


@pytest.mark.parametrize("placement", ["pre", "post"])
def test_init_metrics_match_a_hand_computation(placement):
    data = load_data("markov", seed=1)
    torch.manual_seed(0)
    model = TransformerLM(
        ModelConfig(vocab=data.vocab, depth=2, d=D, heads=2, ffn=32, seq=8, placement=placement)
    )
    rows = init_rows(model, data, P)
    got = {(r["metric"], r["layer"], r["site"]): r["value"] for r in rows}

    g = torch.Generator().manual_seed(P["data_seed"])
    stream_sq = torch.zeros(3)
    ln_sq = torch.zeros(5 if placement == "pre" else 4)
    grads, norms = [], []
    for b in range(P["batches"]):
        x, y = sample_windows(data.train, P["batch"], P["seq"], g)
        logits, stream, ln_inputs = hand_forward(model, x, placement)
        loss = F.cross_entropy(logits.reshape(-1, data.vocab), y.reshape(-1))
        stream_sq += torch.stack([(s**2).sum(-1).mean() / D for s in stream]).detach()
        ln_sq += torch.stack([(s**2).sum(-1).mean() / D for s in ln_inputs]).detach()
        g2 = torch.autograd.grad(loss, [blk.ffn.fc2.weight for blk in model.blocks])
        grads.append(g2)
        norms.append([float(t.norm()) for t in g2])
        if b == 0:
            first_inputs = [t.detach().reshape(-1, D)[: P["jacobian_tokens"]] for t in ln_inputs]

    for layer in range(3):
        assert got[("stream_sq_norm", layer, "stream")] == pytest.approx(
            float(stream_sq[layer]) / 3, rel=1e-5
        )
    sites = ["1.attn", "1.ffn", "2.attn", "2.ffn"] + (["final"] if placement == "pre" else [])
    for i, site in enumerate(sites):
        layer = 3 if site == "final" else int(site[0])
        assert got[("ln_input_sq_norm", layer, site)] == pytest.approx(float(ln_sq[i]) / 3, rel=1e-5)
        # Jacobian of LN at its input, closed form 1/sqrt(var + eps) (gain 1 at init), against the bench's SVD
        v = first_inputs[i].var(-1, unbiased=False)
        assert got[("ln_jacobian", layer, site)] == pytest.approx(
            float((1 / (v + 1e-5).sqrt()).mean()), rel=1e-4
        )
    for layer in (1, 2):
        mean_grad = sum(gs[layer - 1] for gs in grads) / 3
        assert got[("ffn_grad_norm_of_mean", layer, "fc2")] == pytest.approx(
            float(mean_grad.norm()), rel=1e-4
        )
        assert got[("ffn_grad_mean_of_norms", layer, "fc2")] == pytest.approx(
            sum(n[layer - 1] for n in norms) / 3, rel=1e-4
        )
        assert got[("ffn_grad_mean_of_norms", layer, "fc2")] >= got[("ffn_grad_norm_of_mean", layer, "fc2")]
