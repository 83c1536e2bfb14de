"""DeepNet Lemma 4.1's probe at init: the value path x W^V W^O is as large as its Xavier gain says (1 for
Post-LN, β² under DeepNorm's init), a model with v_proj at twice its gain reads twice that (exactly at layer 1) (the probe
measures the model, not the formula), the attention output stays within the value path's size, and the
REPORTED line names each placement's numbers (NO DATA without probe rows)."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from normbench.analysis.claims import evaluate
from normbench.benches import RunContext
from normbench.benches._init.attention_probe import attention_rows
from normbench.runner import run_one
from normbench.suite.expand import expand
from normbench.suite.load import parse_suite

SUITE = """name = "t"
[[bench]]
kind = "init"
norms = ["layernorm"]
[bench.params]
placement = "{placement}"
init = "{init}"
depth = 6
batches = 1
jacobian_tokens = 2
seed = {seed}
"""


def run(placement, init, seed=0):
    (case,) = expand(parse_suite(SUITE.format(placement=placement, init=init, seed=seed)))
    rows, status, _ = run_one(case, RunContext(threads=1))
    assert status == "ok"
    return case, rows


def by_layer(rows, metric):
    return {r["layer"]: r["value"] for r in rows if r["metric"] == metric}


@pytest.mark.parametrize(
    ("placement", "init", "expected"), [("post", "xavier", 1.0), ("deepnorm", "deepnorm", 48**-0.5)]
)
def test_value_path_matches_the_gain_and_attention_stays_within_it(placement, init, expected):
    _, rows = run(placement, init)
    value, out = by_layer(rows, "attn_value_path_ratio"), by_layer(rows, "attn_out_ratio")
    assert sorted(value) == list(range(1, 7)) == sorted(out)
    assert all(abs(v / expected - 1) < 0.15 for v in value.values()), value  # d = 64: a few % per draw
    assert all(out[k] <= 1.05 * value[k] for k in out), (out, value)  # softmax averages: no growth


def test_a_model_with_v_proj_at_twice_its_gain_reads_twice_the_value_path():
    from normbench.benches.init import Init

    case, rows = run("deepnorm", "deepnorm")
    model, data = Init.model_and_data(case, RunContext(threads=1))
    with torch.no_grad():
        for block in model.blocks:
            block.attn.v_proj.weight.mul_(2)
    doubled = by_layer(attention_rows(model, data, case.params), "attn_value_path_ratio")
    before = by_layer(rows, "attn_value_path_ratio")
    assert doubled[1] == pytest.approx(2 * before[1], rel=1e-5)  # the same input: exactly twice
    # later layers: their inputs moved a little
    assert all(doubled[k] == pytest.approx(2 * v, rel=0.05) for k, v in before.items())


def frame_of(*runs) -> pd.DataFrame:
    rows = []
    for case, case_rows in runs:
        base = {
            "bench": "init",
            "case_id": case.case_id,
            "norm": "layernorm",
            "impl": "module",
            "status": "ok",
        }
        base |= {"params": "{}", **case.params}
        rows += [{**base, **r} for r in case_rows]
    return pd.DataFrame(rows)


def test_the_reported_line_names_each_placement():
    df = frame_of(*(run(p, i, s) for p, i in (("post", "xavier"), ("deepnorm", "deepnorm")) for s in (0, 1)))
    v = evaluate(["deepnet_attention_bound_at_init"], df).iloc[0]
    assert v["verdict"] == "REPORTED" and v["seeds"] == "2 (0–1)"
    assert "[deepnorm/deepnorm L=6]" in v["numbers"] and "(expected 0.144)" in v["numbers"]
    assert "[post/xavier L=6]" in v["numbers"] and "(expected 1)" in v["numbers"]
    no_probe = df[~df["metric"].isin(["attn_out_ratio", "attn_value_path_ratio"])]
    assert evaluate(["deepnet_attention_bound_at_init"], no_probe).iloc[0]["verdict"] == "NO DATA"
