"""The stability bench's optimizer and "what trains" axes: SGD steps are w − η·g on exactly the chosen
parameter group (every other parameter keeps its init), Adam stays the default, and the suite validator
refuses settings of the other optimizer at their key path."""

from __future__ import annotations

import pytest
import torch

from normbench.benches._lm.training import TrainSpec, train, trainable
from normbench.core.errors import SuiteError
from normbench.data import load_data
from normbench.models import ModelConfig, TransformerLM
from normbench.suite.load import parse_suite

DATA = load_data("markov", seed=1)


def model(placement="deepnorm", init="deepnorm"):
    torch.manual_seed(0)
    cfg = ModelConfig(vocab=DATA.vocab, depth=2, d=16, heads=2, ffn=32, seq=8, placement=placement, init=init)
    return TransformerLM(cfg)


def names_of(m, params) -> set[str]:
    ids = {id(p) for p in params}
    return {n for n, p in m.named_parameters() if id(p) in ids}


def test_groups_name_the_parameters_they_should():
    cases = {
        "beta_scaled": lambda n: n.endswith(("v_proj.weight", "out_proj.weight", "fc1.weight", "fc2.weight")),
        "weights": lambda n: (
            n.startswith("blocks.") and n.endswith("_proj.weight") or n.endswith(("fc1.weight", "fc2.weight"))
        ),
        "biases": lambda n: (
            n.startswith("blocks.")
            and n.endswith("bias")
            and ("attn." in n or "ffn." in n)
            and "ln_" not in n
        ),
        "embeddings": lambda n: n in ("tok_emb.weight", "pos_emb.weight"),
        "norm_affine": lambda n: ".ln_" in n,
    }
    for group, wanted in cases.items():
        m = model()
        got = names_of(m, trainable(m, group))
        assert got == {n for n, _ in m.named_parameters() if wanted(n)}, group
        assert {n for n, p in m.named_parameters() if p.requires_grad} == got


def test_one_sgd_step_moves_only_the_trained_group_by_lr_times_gradient():
    lr = 1e-2
    reference = model()
    before = {n: p.detach().clone() for n, p in reference.named_parameters()}
    spec = TrainSpec(
        lr=lr,
        warmup=0,
        steps=1,
        every=1,
        batch=4,
        seq=8,
        data_seed=1,
        eval_batches=1,
        optimizer="sgd",
        train="beta_scaled",
    )
    # the gradient of the first batch, computed apart on an identical model
    twin = model()
    from normbench.benches._lm.batches import batch_loss, batches

    batch = next(batches(DATA, spec, 0, spec.data_seed, spec.data_seed + 3))
    grads = dict(
        zip(
            [n for n, _ in twin.named_parameters()],
            torch.autograd.grad(batch_loss(twin, batch, "cpu"), list(twin.parameters()), allow_unused=True),
            strict=True,
        )
    )
    train(reference, DATA, spec)
    for n, p in reference.named_parameters():
        if n.endswith(("v_proj.weight", "out_proj.weight", "fc1.weight", "fc2.weight")):
            torch.testing.assert_close(p.detach(), before[n] - lr * grads[n], rtol=1e-5, atol=1e-7)
        else:
            assert torch.equal(p.detach(), before[n]), n


def test_adam_is_the_default_and_settings_of_the_other_optimizer_are_refused():
    from normbench.benches import get_bench

    params = get_bench("stability").params
    assert params["optimizer"].default == "adam" and params["train"].default == "all"
    text = (
        'name = "x"\n[[bench]]\nkind = "stability"\nnorms = ["layernorm"]\n[bench.params]\n'
        'optimizer = "adam"\nmomentum = 0.9\n'
    )
    with pytest.raises(SuiteError) as info:
        parse_suite(text, "suites/x.toml")
    assert "momentum" in str(info.value) and "SGD setting" in str(info.value)
    with pytest.raises(SuiteError) as info:
        parse_suite(text.replace("momentum = 0.9", 'train = "bias"'), "suites/x.toml")
    assert "did you mean 'biases'" in str(info.value)
