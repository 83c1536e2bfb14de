"""The jacobian claims pass on real bench rows, fail when a number is off, and say NO DATA without rows."""

import pandas as pd
from _jacobian_support import one_thread  # noqa: F401  (autouse fixture)

from normbench.analysis.claims import evaluate
from normbench.benches import RunContext, get_bench
from normbench.core.case import Case

CLAIMS = [
    "layernorm_jacobian_is_centred_bound",
    "xiong_bound_fails_with_mean_offset",
    "rmsnorm_exact_bound",
    "batchnorm_train_block_diagonal",
]


def case_frame(norm, impl, **params):
    bench = get_bench("jacobian")
    p = {k: v.default for k, v in bench.params.items() if not v.required} | params
    result = bench.run_case(
        Case("jacobian", norm, impl, p, 0, f"{norm}{impl}{sorted(params.items())}"), RunContext(1)
    )
    return pd.DataFrame(result.rows).assign(
        bench="jacobian",
        norm=norm,
        impl=impl,
        status=result.status,
        case_id=f"{norm}{impl}{sorted(params.items())}",
        **p,
    )


def frame():
    return pd.concat(
        [
            case_frame("layernorm", "module", d=1024, mean=3.0, method="matrix_free"),
            case_frame("layernorm", "module", d=16, mean=0.0),
            case_frame("rmsnorm", "module", d=32, mean=1.0),
            case_frame("rmsnorm", "module", d=32, eps=0.0),
            case_frame("batchnorm", "train", d=4, batch=6),
        ],
        ignore_index=True,
    )


def test_claims_pass_on_bench_rows_and_fail_on_doctored_ones():
    rows = frame()
    verdicts = evaluate(CLAIMS, rows).set_index("claim")["verdict"]
    assert (verdicts == "PASS").all(), evaluate(CLAIMS, rows).to_string()
    bad = rows.copy()
    bad.loc[(bad["metric"] == "rel_err") & (bad["norm"] == "layernorm"), "value"] = 1e-3
    bad.loc[(bad["metric"] == "cross_channel_max"), "value"] = 1e-9
    verdicts = evaluate(CLAIMS, bad).set_index("claim")["verdict"]
    assert verdicts["layernorm_jacobian_is_centred_bound"] == "FAIL"
    assert verdicts["batchnorm_train_block_diagonal"] == "FAIL"


def test_claims_without_rows_say_no_data():
    empty = pd.DataFrame({"bench": ["latency"], "metric": ["time"], "value": [1.0], "status": ["ok"]})
    assert set(evaluate(CLAIMS, empty)["verdict"]) == {"NO DATA"}


def test_the_mean_offset_prediction_includes_epsilon():
    # σ = 0.003: σ² = 9e-6 is comparable to ε = 1e-5, so measured/bound = √(1+μ²/σ²)·√(σ²/(σ²+ε)) ≈ 0.69·√10;
    # the prediction without ε (√10) would be off by 30% and FAIL a correct Jacobian
    small = case_frame("layernorm", "module", d=1024, mean=3.0, scale=0.003, method="matrix_free")
    large = case_frame("layernorm", "module", d=1024, mean=3.0, method="matrix_free")
    assert (
        evaluate(["xiong_bound_fails_with_mean_offset"], pd.concat([small, large])).iloc[0]["verdict"]
        == "PASS"
    )
    wrong = small.copy()
    wrong.loc[wrong["metric"] == "ratio_xiong", "value"] *= 1.3  # a Jacobian 30% off the closed form
    assert evaluate(["xiong_bound_fails_with_mean_offset"], wrong).iloc[0]["verdict"] == "FAIL"


def test_the_bound_exceeded_half_without_inputs_above_3_eps_is_no_data():
    """Only σ² < 3ε inputs: 'exceeded on 0/0' proves nothing about the offset; the prediction alone held
    (it used to read PASS), so the claim has no data for its other half."""
    small = case_frame("layernorm", "module", d=1024, mean=3.0, scale=0.003, method="matrix_free")
    v = evaluate(["xiong_bound_fails_with_mean_offset"], small).iloc[0]
    assert v["verdict"] == "NO DATA" and "exceeded on 0/0" in v["numbers"]
