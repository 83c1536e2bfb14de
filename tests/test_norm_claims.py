"""The norm claims (analysis/claims/norms.py) on synthetic rows with fixed numbers: each reaches PASS, FAIL,
REPORTED or NO DATA as its threshold says, with one margin for "worse" and "comparable", PowerNorm judged
as its authors ran it, the fluctuation at the first BatchNorm; runs paired within the objective."""

from __future__ import annotations

import pandas as pd
import pytest
from _norms_support import frame, scale_case, training_run

from normbench.analysis.claims import evaluate

NORM_CLAIMS = [
    "bn_masked_lm_worse_than_ln",
    "bn_fluctuation_beyond_iid",
    "powernorm_narrows_bn_gap",
    "powernorm_not_behind_bn_or_ln",
    "powernorm_nu_share",
    "bn_fluctuation_above_cnn",
    "bn_cnn_beats_ln",
    "ln_cnn_beats_no_norm",
    "ln_batch_size_robust_bn_degrades",
    "dyt_preln_within_margin_of_ln",
    "rmsnorm_preln_matches_ln",
    "dyt_in_postln",
    "rmsnorm_postln_stuck_onset",
    "scale_invariance_ln_rms_bn",
    "dyt_not_scale_invariant",
]


def verdict(name, df):
    return evaluate([name], df).set_index("claim").loc[name]


def masked(ln, bn, pn, algorithm1=None):
    norms = [("layernorm", ln), ("batchnorm", bn), ("powernorm:official", pn)]
    norms += [("powernorm", algorithm1)] if algorithm1 else []
    return frame(*[training_run(norm, s, v) for norm, vs in norms for s, v in enumerate(vs)])


def test_every_claim_is_no_data_without_rows():
    empty = frame(training_run("layernorm", 0, 2.0, objective="causal"))
    assert set(evaluate(NORM_CLAIMS, empty)["verdict"]) == {"NO DATA"}


def test_bn_worse_and_powernorm_narrows_the_gap():
    df = masked([2.0, 2.02, 2.04], [2.3, 2.25, 2.4], [2.1, 2.08, 2.15])  # BN − PN 0.21 ± 0.04
    v = verdict("bn_masked_lm_worse_than_ln", df)
    assert v["verdict"] == "PASS" and v["seeds"] == "3 (0–2)" and "+0.297 nats" in v["numbers"]
    assert verdict("powernorm_narrows_bn_gap", df)["verdict"] == "PASS"
    # judged on powernorm:official: Algorithm 1 stuck beside it is reported, not judged
    stuck = verdict(
        "powernorm_narrows_bn_gap", masked([2.0] * 3, [2.3, 2.25, 2.4], [2.1, 2.08, 2.15], [2.95] * 3)
    )
    assert (
        stuck["verdict"] == "PASS"
        and "powernorm − LayerNorm +0.950 nats (ok/stuck/diverged 0/3/0)" in stuck["numbers"]
    )
    # worse by 0.02 nats, however consistently: within the margin that calls RMSNorm "comparable"
    slightly = masked([2.0, 2.02, 2.04], [2.02, 2.04, 2.06], [2.1] * 3)
    assert verdict("bn_masked_lm_worse_than_ln", slightly)["verdict"] == "FAIL"
    # BatchNorm as good as LayerNorm within seed noise: not "worse"
    same = masked([2.0, 2.02, 2.04], [2.03, 1.99, 2.05], [2.1, 2.1, 2.12])
    assert verdict("bn_masked_lm_worse_than_ln", same)["verdict"] == "FAIL"


def test_powernorm_is_not_judged_where_batchnorm_is_not_worse():
    """No BatchNorm penalty: 'premise absent', REPORTED with its numbers (it was a FAIL that read as
    'PowerNorm does not help'); a penalty PowerNorm does not remove is the FAIL."""
    same = masked([2.0, 2.02, 2.04], [2.03, 1.99, 2.05], [2.1, 2.1, 2.12])
    v = verdict("powernorm_narrows_bn_gap", same)
    assert v["verdict"] == "REPORTED" and v["numbers"].startswith(
        "premise absent: batchnorm − LayerNorm +0.003"
    )
    assert "batchnorm − LN [" in v["CI"] and "batchnorm − PN [" in v["CI"]
    unhelpful = masked([2.0, 2.02, 2.04], [2.3, 2.25, 2.4], [2.29, 2.26, 2.38])
    v = verdict("powernorm_narrows_bn_gap", unhelpful)
    assert v["verdict"] == "FAIL" and v["numbers"].startswith("premise holds")


def test_batchnorm_claims_need_the_papers_batches():
    """Masked runs on fixed windows (or stored before batching existed) are not padded sentences with
    statistics over real tokens: no data, where they used to be judged."""
    windows = [
        ("layernorm", [2.0, 2.02, 2.04]),
        ("batchnorm", [2.3, 2.25, 2.4]),
        ("powernorm:official", [2.1] * 3),
    ]
    df = frame(*[training_run(n, s, v, batching="windows") for n, vs in windows for s, v in enumerate(vs)])
    for name in ("bn_masked_lm_worse_than_ln", "powernorm_narrows_bn_gap"):
        assert verdict(name, df)["verdict"] == "NO DATA"
    loud = [
        training_run("batchnorm", s, 2.3, fluctuation=fluct(3.0 + s / 10), batching="windows")
        for s in range(3)
    ]
    assert verdict("bn_fluctuation_beyond_iid", frame(*loud))["verdict"] == "NO DATA"


def test_each_setting_is_judged_on_its_own():
    """Two corpora are two settings: BatchNorm worse on one and not on the other is a FAIL naming both,
    never one interval pooled over both."""
    runs = []
    for data, bn in (("stdlib", [2.3, 2.25, 2.4]), ("text", [2.0, 2.03, 2.04])):
        for norm, losses in (("layernorm", [2.0, 2.02, 2.04]), ("batchnorm", bn)):
            runs += [training_run(norm, s, v, data=data) for s, v in enumerate(losses)]
    v = verdict("bn_masked_lm_worse_than_ln", frame(*runs))
    assert v["verdict"] == "FAIL" and "[data=stdlib]" in v["numbers"] and "[data=text]" in v["numbers"]
    stdlib_only = frame(*[r for r in runs if '"stdlib"' in r[0]["params"]])
    assert verdict("bn_masked_lm_worse_than_ln", stdlib_only)["verdict"] == "PASS"
    sweep = evaluate(["bn_gap_by_setting"], frame(*runs)).iloc[0]
    assert sweep["verdict"] == "REPORTED" and "[data=stdlib] BN − LN +0.297" in sweep["numbers"]


def test_pairs_stay_within_the_objective():
    # causal LayerNorm runs far below: pairing BatchNorm with them would pass the claim falsely
    df = pd.concat(
        [
            masked([2.3, 2.25, 2.4], [2.3, 2.25, 2.4], [2.1, 2.1, 2.1]),
            frame(*[training_run("layernorm", s, 1.0, objective="causal") for s in range(3)]),
        ]
    )
    assert verdict("bn_masked_lm_worse_than_ln", df)["verdict"] == "FAIL"


def test_dyt_margin_is_one_sided_and_rmsnorm_two_sided():
    def pre(norm, losses):
        return [training_run(norm, s, v, objective="causal") for s, v in enumerate(losses)]

    ln = pre("layernorm", [1.40, 1.42, 1.41])
    better = frame(*ln, *pre("dyt", [1.30, 1.31, 1.29]), *pre("rmsnorm", [1.30, 1.31, 1.29]))
    assert verdict("dyt_preln_within_margin_of_ln", better)["verdict"] == "PASS"
    assert verdict("rmsnorm_preln_matches_ln", better)["verdict"] == "FAIL"  # 0.11 nats better: not "≈"
    close = frame(*ln, *pre("dyt", [1.42, 1.43, 1.43]), *pre("rmsnorm", [1.41, 1.42, 1.40]))
    assert verdict("dyt_preln_within_margin_of_ln", close)["verdict"] == "PASS"
    assert verdict("rmsnorm_preln_matches_ln", close)["verdict"] == "PASS"
    worse = frame(*ln, *pre("dyt", [1.75, 1.70, 1.80]))
    v = verdict("dyt_preln_within_margin_of_ln", worse)
    assert v["verdict"] == "FAIL" and "gap [" in v["CI"]


def test_postln_lines_are_reported_with_stuck_onsets():
    def post(norm, depth, losses):
        return [
            training_run(norm, s, v, objective="causal", placement="post", depth=depth)
            for s, v in enumerate(losses)
        ]

    df = frame(
        *post("layernorm", 6, [1.4, 1.4, 1.4]),
        *post("layernorm", 12, [3.0, 3.0, 1.5]),
        *post("rmsnorm", 6, [1.4, 1.4, 1.4]),
        *post("rmsnorm", 12, [1.5, 1.5, 3.0]),
        *post("dyt", 6, [1.6, 1.7, 1.65]),
    )
    onset = verdict("rmsnorm_postln_stuck_onset", df)
    assert onset["verdict"] == "REPORTED"
    assert "layernorm: stuck L=6 0/3, L=12 2/3; onset L=12" in onset["numbers"]
    assert "rmsnorm: stuck L=6 0/3, L=12 1/3; onset none" in onset["numbers"]
    dyt = verdict("dyt_in_postln", df)
    assert dyt["verdict"] == "REPORTED" and "L=6:" in dyt["numbers"] and "+0.250 nats" in dyt["numbers"]


def fluct(ratio, deeper=None):
    """Ratio `ratio` at the first BatchNorm (1.attn), `deeper` (default the same) at every later one."""
    steps = 30
    return {
        (layer, site): {
            "bn_mean_rel_dist": [0.1 * (ratio if (layer, site) == (1, "1.attn") else deeper or ratio)]
            * steps,
            "bn_mean_rel_dist_iid": [0.1] * steps,
        }
        for layer in (1, 2)
        for site in (f"{layer}.attn", f"{layer}.ffn")
    }


@pytest.mark.parametrize(("ratios", "expected"), [((3.0, 3.5, 4.0), "PASS"), ((1.1, 1.2, 1.0), "FAIL")])
def test_fluctuation_beyond_the_iid_floor(ratios, expected):
    df = frame(*[training_run("batchnorm", s, 2.3, fluctuation=fluct(r)) for s, r in enumerate(ratios)])
    v = verdict("bn_fluctuation_beyond_iid", df)
    assert v["verdict"] == expected and v["seeds"] == "3 (0–2)"


def test_fluctuation_is_judged_at_the_first_batchnorm():
    quiet_first = [training_run("batchnorm", s, 2.3, fluctuation=fluct(1.1, deeper=5.0)) for s in range(3)]
    v = verdict("bn_fluctuation_beyond_iid", frame(*quiet_first))
    assert v["verdict"] == "FAIL" and "first BatchNorm (1.attn)" in v["numbers"]
    loud_first = [
        training_run("batchnorm", s, 2.3, fluctuation=fluct(3.0 + s / 10, deeper=1.0)) for s in range(3)
    ]
    assert verdict("bn_fluctuation_beyond_iid", frame(*loud_first))["verdict"] == "PASS"


def scale_frame(ln_dev=0.0, dyt_ratio=None):
    scales = (0.5, 2.0, 10.0)
    rows = []
    for s in range(3):
        for norm in ("layernorm", "rmsnorm", "batchnorm"):
            rows.append(scale_case(norm, s, {c: (1 + ln_dev) / c for c in scales}))
        rows.append(scale_case("dyt", s, {c: dyt_ratio(c) for c in scales}))
    return frame(*rows)


def test_scale_invariance_within_one_percent_and_dyt_clearly_not():
    df = scale_frame(ln_dev=0.002, dyt_ratio=lambda c: 1.0)
    assert verdict("scale_invariance_ln_rms_bn", df)["verdict"] == "PASS"
    assert verdict("dyt_not_scale_invariant", df)["verdict"] == "PASS"
    broken = scale_frame(ln_dev=0.03, dyt_ratio=lambda c: 1.02 / c)  # DyT as if invariant
    assert verdict("scale_invariance_ln_rms_bn", broken)["verdict"] == "FAIL"
    assert verdict("dyt_not_scale_invariant", broken)["verdict"] == "FAIL"
    no_bn = df[df["norm"] != "batchnorm"]
    assert verdict("scale_invariance_ln_rms_bn", no_bn)["verdict"] == "NO DATA"


def _missing_for_norms_suite() -> list[str]:
    """What suites/norms.toml needs from the model and norm registries, where this build lacks it."""
    from normbench.benches import all_benches
    from normbench.norms import all_norms

    benches = all_benches()
    needs = {
        "stability/init parameter `objective`": "objective" in benches["stability"].params,
        "norm `powernorm`": "powernorm" in all_norms(),
        "block `powernorm_folded`": "powernorm_folded" in (benches["block"].params["block"].choices or ()),
    }
    return [what for what, present in needs.items() if not present]


MISSING = _missing_for_norms_suite()


@pytest.mark.xfail(bool(MISSING), reason="suites/norms.toml needs " + "; ".join(MISSING), strict=True)
def test_the_norms_suite_validates_with_every_norm_seeds_and_known_claims():
    from pathlib import Path

    from normbench.analysis.claims import all_claims
    from normbench.suite.expand import expand
    from normbench.suite.load import load_suite

    suite = load_suite(Path(__file__).parent.parent / "suites" / "norms.toml")
    assert sorted(suite.claims) == sorted(NORM_CLAIMS) and set(suite.claims) <= set(all_claims())
    cases = expand(suite)
    masked = {
        (c.norm if c.impl in (None, "train", "module") else f"{c.norm}:{c.impl}", c.params["seed"])
        for c in cases
        if c.kind == "stability" and c.params["objective"] == "masked"
    }
    assert {n for n, _ in masked} == {
        "layernorm",
        "rmsnorm",
        "dyt",
        "batchnorm",
        "batchnorm:official",
        "powernorm",
        "powernorm:official",
    }
    assert all(len({s for m, s in masked if m == n}) >= 3 for n, _ in masked)
    # the claims' setting under a token budget, fixed rows beside it as the stress cell
    budgets = {
        c.params.get("max_tokens", 0) for c in cases if c.kind == "stability" and c.norm == "batchnorm"
    }
    assert budgets == {0, 1152}
    # the BatchNorm claims' setting: padded sentence batches (statistics over real tokens), varied portable text
    assert {
        (c.params["batching"], c.params["data"])
        for c in cases
        if c.kind == "stability" and c.params["objective"] == "masked"
    } == {("bucketed", "code")}  # the portable generated code, not this Python's stdlib
    assert {c.norm for c in cases if c.kind == "cnn"} == {"batchnorm", "layernorm", "identity"}
    assert len({c.params["seed"] for c in cases if c.kind == "cnn"}) >= 3
    blocks = {c.params["block"] for c in cases if c.kind == "block"}
    assert {"batchnorm_folded", "powernorm_folded", "dyt", "layernorm", "rmsnorm"} <= blocks
    assert {c.norm for c in cases if c.kind == "init"} == {
        "layernorm",
        "rmsnorm",
        "dyt",
        "batchnorm",
        "powernorm",
    }


def test_scales_below_the_judged_range_are_listed_not_judged():
    # at c = 0.01, ε/(c²σ²) breaks the invariance by design: shown, not held against the 1% threshold
    rows = []
    for s in range(3):
        for norm in ("layernorm", "rmsnorm", "batchnorm"):
            rows.append(scale_case(norm, s, {0.01: 0.85 / 0.01, 2.0: 1.001 / 2.0}))
    v = verdict("scale_invariance_ln_rms_bn", frame(*rows))
    assert v["verdict"] == "PASS" and "c=0.01 (not judged) 0.15" in v["numbers"]
