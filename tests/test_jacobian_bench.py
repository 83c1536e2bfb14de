"""The jacobian bench: bad suites are validation errors naming the key; a case's rows carry the measured
σ_max, closed form, both bounds and the verdict (Xiong's bound fails under a mean offset); a
non-converged run is recorded as such; inputs are seeded; the report says FAILS plainly; DyT is measured
when a norm named dyt is registered."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from _jacobian_support import one_thread  # noqa: F401  (autouse fixture)

from normbench.benches import RunContext, get_bench
from normbench.benches._jacobian.inputs import draw_rows, make_inputs
from normbench.core.case import Case
from normbench.core.errors import SuiteError
from normbench.core.tables import ReportOptions, render
from normbench.suite.expand import expand
from normbench.suite.load import parse_suite


def suite(sweep="", params="", norms='["layernorm"]'):
    return f'name = "t"\n[[bench]]\nkind = "jacobian"\nnorms = {norms}\n[bench.sweep]\n{sweep}\n[bench.params]\n{params}\n'


def problems(text):
    with pytest.raises(SuiteError) as info:
        parse_suite(text, "s.toml")
    return [str(p) for p in info.value.problems]


@pytest.mark.parametrize(
    "text,where,words",
    [
        (suite("d = [4, 0]"), "bench[0].sweep.d[1]", "must be >= 1"),
        (suite("d = [4]", "eps = -1e-5"), "bench[0].params.eps", "must be >= 0"),
        (
            suite("d = [4]", 'dtype = "bf16"\nmethod = "exact"'),
            "bench[0].params.dtype",
            "svdvals has no bf16",
        ),
        (
            suite("d = [4]", 'dtype = "bf16"\nmethod = "matrix_free"'),
            "bench[0].params.dtype",
            "cannot use bf16 at tol",
        ),
        (suite("d = [64, 4096]", 'method = "exact"'), "bench[0].params.method", "above exact_limit = 2048"),
        (
            suite("d = [64]", 'method = "exact"\nbatch = 64', '["batchnorm:train"]'),
            "bench[0].params.method",
            "batch·d = 4096",
        ),
        (suite("d = [4]", "batch = 1", '["batchnorm:train"]'), "bench[0].params.batch", "must be >= 2"),
        (suite("d = [4]", "", '["identity"]'), "bench[0].norms", "no Jacobian closed form"),
        (suite('d = [4]\ndist = ["gausian"]'), "bench[0].sweep.dist[0]", "did you mean 'gaussian'"),
        (suite("d = [4]", "tol = 1.5"), "bench[0].params.tol", "must be < 1"),
    ],
)
def test_bad_suites_are_validation_errors_naming_the_key(text, where, words):
    found = problems(text)
    assert any(p.startswith(where + ":") and words in p for p in found), found


def test_auto_method_and_fp32_defaults_validate():
    s = parse_suite(suite('d = [3, 4096]\ndtype = ["fp64", "fp32"]', 'method = "auto"'), "s.toml")
    assert len(expand(s)) == 4


def run(norm, impl, **params):
    bench = get_bench("jacobian")
    p = {k: v.default for k, v in bench.params.items() if not v.required} | params
    assert bench.check_case(p, norm, impl) == []
    result = bench.run_case(Case("jacobian", norm, impl, p, 0, "id"), RunContext(threads=1))
    frame = pd.DataFrame(result.rows)
    return result, frame.pivot_table(index="sample", columns="metric", values="value"), frame


def test_mean_offset_breaks_xiongs_bound_but_not_the_centred_one():
    result, wide, frame = run("layernorm", "module", d=256, mean=10.0, inputs=3)
    assert result.status == "ok"
    assert (wide["rel_err"].abs() < 1e-10).all()
    assert (wide["bound_held"] == 0).all() and (wide["centred_held"] == 1).all()
    # σ_max·‖x‖/√d ≈ √(1 + μ²/var) ≈ √101
    assert wide["ratio_xiong"].between(math.sqrt(101) * 0.85, math.sqrt(101) * 1.15).all()
    assert np.allclose(wide["ratio_xiong"], wide["inflation"] * wide["ratio_centred"], rtol=1e-12)
    assert set(frame["method"]) == {"exact"} and set(frame["closed_form_kind"]) == {"exact"}


def test_rmsnorm_meets_xiongs_bound_with_equality_at_eps_zero():
    result, wide, _ = run("rmsnorm", "module", d=64, mean=3.0, eps=0.0)
    assert np.allclose(wide["ratio_xiong"], 1.0, rtol=1e-12) and (wide["bound_held"] == 1).all()


def test_matrix_free_rows_and_batchnorm_train_structure():
    result, wide, frame = run("batchnorm", "train", d=4, batch=8, method="matrix_free", gain="random")
    assert set(frame["method"]) == {"matrix_free"}
    assert (wide["converged"] == 1).all() and (wide["iterations"] >= 1).all()
    assert (wide["rel_err"].abs() < 1e-6).all()
    assert wide["coupling"].between(0.3, 1.5).all()
    result, wide, _ = run("batchnorm", "train", d=4, batch=8, method="exact", gain="random")
    assert (wide["cross_channel_max"] == 0).all() and (wide["channel_rel_err_max"] < 1e-10).all()


def test_random_gain_is_reported_as_a_bound():
    result, wide, frame = run("layernorm", "functional", d=64, gain="random")
    assert set(frame["closed_form_kind"]) == {"bound"}
    assert (wide["rel_err"] <= 1e-12).all() and (wide["rel_err"] > -0.2).all()


def test_non_convergence_is_recorded_with_the_last_estimate():
    result, wide, _ = run(
        "layernorm", "module", d=512, gain="random", method="matrix_free", max_iters=2, tol=1e-12
    )
    assert result.status == "not_converged" and "did not reach tol" in result.error
    assert (wide["converged"] == 0).all() and (wide["iterations"] == 2).all()
    assert (wide["sigma_max"] > 0).all() and (wide["sigma_max"] <= wide["closed_form"] * (1 + 1e-12)).all()


def test_eps_zero_on_a_constant_row_fails_with_a_reason():
    bench = get_bench("jacobian")
    p = {k: v.default for k, v in bench.params.items() if not v.required} | {
        "d": 4,
        "eps": 0.0,
        "dist": "constant",
    }
    with pytest.raises(FloatingPointError, match="non-finite"):
        bench.run_case(Case("jacobian", "layernorm", "module", p, 0, "id"), RunContext(threads=1))


def test_inputs_are_seeded_and_shaped():
    a = draw_rows("student_t", 3, 10, mean=1.0, scale=2.0, seed=5)
    assert np.array_equal(a, draw_rows("student_t", 3, 10, mean=1.0, scale=2.0, seed=5))
    assert not np.array_equal(a, draw_rows("student_t", 3, 10, mean=1.0, scale=2.0, seed=6))
    c = draw_rows("constant", 4, 7, mean=3.0)
    assert (c == c[:, :1]).all()
    o = draw_rows("outlier", 4, 50, outlier=1000.0)
    assert ((o == 1000.0).sum(axis=1) == 1).all()
    g = draw_rows("gaussian", 2, 20000, mean=10.0, scale=0.5)
    assert abs(g.mean() - 5.0) < 0.02 and abs(g.std() - 0.5) < 0.02
    b = make_inputs("gaussian", 2, 3, batch=5, dtype=torch.float32)
    assert b.shape == (2, 5, 3) and b.dtype == torch.float32


def test_report_says_fails_plainly_and_names_the_norms(tmp_path):
    frames = []
    for norm, impl, mean in (
        ("layernorm", "module", 0.0),
        ("layernorm", "module", 3.0),
        ("rmsnorm", "module", 3.0),
    ):
        result, _, frame = run(norm, impl, d=32, mean=mean)
        frames.append(
            frame.assign(
                norm=norm,
                impl=impl,
                status=result.status,
                case_id=f"{norm}{mean}",
                bench="jacobian",
                d=32,
                mean=mean,
                dist="gaussian",
                eps=1e-5,
                dtype="fp64",
                gain="ones",
                scale=1.0,
            )
        )
    tables = get_bench("jacobian").report(pd.concat(frames), ReportOptions(machine="test"))
    text = render(tables, "github")
    assert [t.title for t in tables] == [
        "Jacobian σ_max: summary per norm",
        "Jacobian σ_max: layernorm:module",
        "Jacobian σ_max: rmsnorm:module",
    ]
    ln = tables[1].frame.set_index("mean")
    assert ln.loc[3.0, "Xiong's √d/‖x‖"].startswith("FAILS 4/4")
    assert ln.loc[3.0, "centred √d/‖x−μ‖"] == "held"
    assert tables[2].frame["Xiong's √d/‖x‖"].tolist() == ["held"]
    assert "FAILS" in text


def test_dyt_is_measured_when_registered():
    """With the real normbench/norms/dyt.py, or a stand-in of the same form registered for this test."""
    from normbench.norms import all_norms, registry

    added = None
    if "dyt" not in all_norms():

        class DyTModule(torch.nn.Module):
            def __init__(self, d, dtype):
                super().__init__()
                self.alpha = torch.nn.Parameter(torch.tensor(0.5, dtype=dtype))
                self.weight = torch.nn.Parameter(torch.ones(d, dtype=dtype))
                self.bias = torch.nn.Parameter(torch.zeros(d, dtype=dtype))

            def forward(self, x):
                return self.weight * torch.tanh(self.alpha * x) + self.bias

        @registry.register_norm
        class DyT(registry.Norm):
            name = "dyt"

            @registry.impl("module", baseline=True)
            def module(self, hidden, *, eps, dtype, device):
                m = DyTModule(hidden, dtype)
                return registry.Built(m, list(m.parameters()), m)

        added = "dyt"
    try:
        impl = all_norms()["dyt"].baseline
        result, wide, _ = run("dyt", impl, d=64, scale=5.0, gain="random")
        assert result.status == "ok" and (wide["rel_err"].abs() < 1e-10).all()
        # bounded by max|γ|·α whatever ‖x‖ is: Xiong's bound fails once ‖x‖ is large
        _, wide, _ = run("dyt", impl, d=64, scale=100.0)
        assert (wide["bound_held"] == 0).all()
    finally:
        if added:
            registry.NORMS.remove(added)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("method", ["exact", "matrix_free"])
def test_cuda_cases_match_the_closed_form(method):
    result, wide, _ = run("layernorm", "module", d=256, mean=3.0, device="cuda", method=method)
    assert result.status == "ok" and (wide["rel_err"].abs() < 1e-10).all()
    result, wide, _ = run("batchnorm", "train", d=8, batch=8, device="cuda", method=method)
    assert result.status == "ok" and (wide["rel_err"].abs() < 1e-10).all()
