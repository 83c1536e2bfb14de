"""Batch-statistics fluctuation rows equal an independent fp64 computation against the running statistics
held before the step's update; scale_grad_ratio is 1/c for LN, RMSNorm and BatchNorm and not for DyT; a
BatchNorm masked-LM run trains and stores its fluctuation rows per layer and step."""

import numpy as np
import pytest
import torch

from normbench.benches import RunContext
from normbench.benches._init.scale_invariance import SCALES, scale_grad_rows
from normbench.benches._lm.fluctuation import FluctuationRecorder, fluctuation_rows
from normbench.models.transformer import ModelConfig, TransformerLM
from normbench.runner import run_one
from normbench.suite.expand import expand
from normbench.suite.load import parse_suite


def test_batchnorm_rows_match_numpy():
    bn = torch.nn.BatchNorm1d(6)
    g = torch.Generator().manual_seed(0)
    bn.running_mean.copy_(torch.randn(6, generator=g))
    bn.running_var.copy_(torch.rand(6, generator=g) + 0.5)
    x = torch.randn(40, 6, generator=g) * 2 + 0.3
    got = {m: float(v) for m, _, v in fluctuation_rows(x, bn)}
    xs, mu, var = x.double().numpy(), bn.running_mean.double().numpy(), bn.running_var.double().numpy()
    mu_b, var_b = xs.mean(0), xs.var(0)
    expected = {
        "bn_mean_rel_dist": np.linalg.norm(mu_b - mu) / np.linalg.norm(mu),
        "bn_var_rel_dist": np.linalg.norm(var_b - var) / np.linalg.norm(var),
        "bn_mean_dist_d": np.linalg.norm(mu_b - mu) / 6,
        "bn_var_dist_d": np.linalg.norm(var_b - var) / 6,
        "bn_mean_rel_dist_iid": np.sqrt(var_b.sum() / 40) / np.linalg.norm(mu),
        "bn_mean_shift_sd": np.sqrt(np.mean((mu_b - mu) ** 2 / var)),
        "bn_var_shift": np.sqrt(np.mean((var_b / var - 1) ** 2)),
    }
    assert got == pytest.approx(expected, rel=1e-12)


def test_a_zero_running_mean_stores_no_relative_mean_distance():
    rows = {m for m, _, _ in fluctuation_rows(torch.randn(8, 4), torch.nn.BatchNorm1d(4))}
    assert rows == {"bn_mean_dist_d", "bn_var_dist_d", "bn_var_rel_dist", "bn_mean_shift_sd", "bn_var_shift"}


class QuadraticMeanNorm(torch.nn.Module):
    """Stands in for PowerNorm's module: the contract is only the `running_phi` buffer (psi^2 per channel)."""

    def __init__(self, d):
        super().__init__()
        self.register_buffer("running_phi", torch.full((d,), 2.0))


def test_powernorm_quadratic_mean_distance_uses_running_phi():
    x = torch.randn(50, 5, generator=torch.Generator().manual_seed(1))
    (row,) = fluctuation_rows(x, QuadraticMeanNorm(5))
    psi2_b = (x.double() ** 2).mean(0)
    assert row[0] == "pn_qm_rel_dist"
    assert float(row[2]) == pytest.approx(
        float((psi2_b - 2).norm() / torch.full((5,), 2.0, dtype=torch.float64).norm()), rel=1e-12
    )


def test_recorder_measures_against_the_statistics_before_the_step_updates_them():
    torch.manual_seed(0)
    model = TransformerLM(
        ModelConfig(
            vocab=9,
            depth=2,
            d=8,
            heads=2,
            ffn=16,
            seq=6,
            norm="batchnorm",
            placement="pre",
            objective="masked",
        )
    )
    with torch.no_grad():  # non-trivial running statistics, as after some training
        for m in model.norms():
            m.inner.running_mean.uniform_(0.5, 1.5)
    norm = model.blocks[1].ln_ffn
    before = (norm.inner.running_mean.clone(), norm.inner.running_var.clone())
    norm.kept = []
    recorder = FluctuationRecorder(model)
    recorder.arm(7)
    model(torch.randint(9, (4, 6)))
    recorder.disarm()
    x = norm.kept[0].reshape(-1, 8).double()
    assert not norm.inner.running_mean.equal(before[0])  # the forward did update them
    rows = {r["metric"]: r for r in recorder.rows if r["site"] == "2.ffn"}
    expected = (x.mean(0) - before[0].double()).norm() / before[0].double().norm()
    assert float(rows["bn_mean_rel_dist"]["value"]) == pytest.approx(float(expected), rel=1e-9)
    assert rows["bn_mean_rel_dist"]["step"] == 7 and rows["bn_mean_rel_dist"]["layer"] == 2
    assert len(recorder.rows) == 7 * len(model.norms())  # 7 metrics per BatchNorm
    model.eval()
    recorder.arm(8)
    model(torch.randint(9, (4, 6)))  # eval mode: running statistics used, nothing measured
    assert len(recorder.rows) == 7 * len(model.norms())  # 7 metrics per BatchNorm


@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm", "batchnorm"])
def test_scale_invariant_norms_give_gradient_ratio_one_over_c(norm):
    rows = scale_grad_rows(norm, None, 16, 1e-5, seed=0)
    assert [r["scale"] for r in rows] == list(SCALES)
    for r in rows:  # eps / var ~ 1e-5 is the only departure from exact invariance
        assert r["value"] == pytest.approx(1 / r["scale"], rel=1e-4)


def test_dyt_is_not_scale_invariant():
    for r in scale_grad_rows("dyt", None, 16, 1e-5, seed=0):
        assert abs(r["value"] * r["scale"] - 1) > 0.3


def test_scale_invariance_is_exact_without_eps():
    (row, _) = scale_grad_rows("layernorm", None, 16, 1e-300, seed=3)
    assert row["value"] == pytest.approx(0.5, rel=1e-12)


def test_batchnorm_masked_run_trains_and_stores_fluctuation_per_layer_and_step():
    text = (
        'name = "t"\n[[bench]]\nkind = "stability"\nnorms = ["batchnorm"]\n[bench.params]\n'
        'objective = "masked"\nplacement = "pre"\ndepth = 2\nd = 16\nffn = 32\nseq = 32\nbatch = 8\n'
        'steps = 60\nevery = 20\neval_batches = 2\ndata = "text"\nlr = 3e-3\n'
    )
    ((rows, status, _),) = [run_one(case, RunContext(threads=1)) for case in expand(parse_suite(text))]
    losses = [r["value"] for r in rows if r["metric"] == "loss"]
    assert status in ("ok", "stuck") and len(losses) == 60
    assert np.mean(losses[-10:]) < np.mean(losses[:5]) - 0.3  # the loss falls
    final = next(r["value"] for r in rows if r["metric"] == "final_loss")
    assert final < losses[0] - 0.3  # and so does the held-out loss, measured in eval mode (running stats)
    fluct = [r for r in rows if r["metric"] == "bn_var_rel_dist"]
    assert {(r["step"], r["site"]) for r in fluct} == {
        (s, site) for s in (1, 20, 40, 60) for site in ("1.attn", "1.ffn", "2.attn", "2.ffn", "final")
    }
    assert all(np.isfinite(r["value"]) and r["value"] >= 0 for r in fluct)


def test_init_bench_stores_scale_rows_and_no_per_token_jacobian_for_batchnorm():
    text = (
        'name = "t"\n[[bench]]\nkind = "init"\nnorms = ["batchnorm"]\n[bench.params]\nobjective = "masked"\n'
        'placement = "subln"\ndepth = 1\nd = 8\nffn = 16\nseq = 8\nbatch = 2\nbatches = 1\ndata = "text"\n'
    )
    ((rows, status, _),) = [run_one(case, RunContext(threads=1)) for case in expand(parse_suite(text))]
    assert status == "ok" and not [r for r in rows if r["metric"].startswith("ln_jacobian")]
    sites = {r["site"] for r in rows if r["metric"] == "ln_input_sq_norm"}
    assert sites == {"1.attn", "1.attn_mid", "1.ffn", "1.ffn_mid", "final"}
    ratios = {r["scale"]: r["value"] for r in rows if r["metric"] == "scale_grad_ratio"}
    assert ratios == pytest.approx({c: 1 / c for c in SCALES}, rel=1e-4)


def test_probe_uses_batch_statistics_and_leaves_running_statistics_alone():
    from normbench.benches._lm.training import probe

    torch.manual_seed(0)
    model = TransformerLM(
        ModelConfig(
            vocab=9,
            depth=1,
            d=8,
            heads=2,
            ffn=16,
            seq=6,
            norm="batchnorm",
            placement="pre",
            objective="masked",
        )
    )
    before = [b.clone() for b in model.buffers()]
    x = torch.randint(9, (4, 6))
    h, _ = probe(model, x)
    assert all(b.equal(saved) for b, saved in zip(model.buffers(), before, strict=True))
    flat = h.reshape(-1, 8)  # the final BatchNorm normalized the probe batch with its own statistics
    torch.testing.assert_close(flat.mean(0), torch.zeros(8), atol=1e-5, rtol=0)
