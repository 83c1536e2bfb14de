"""The paper claims on synthetic frames with fixed numbers: each reaches the known PASS / FAIL / NOT
REPRODUCED / NO DATA, a planted regression in a claim with a documented disagreement reads FAIL, runs are
paired on every swept parameter, and not_converged is derived across cases."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from normbench.analysis.claims import evaluate
from normbench.analysis.claims.stats import behind_reference, mean_ci, not_converged, paired, slope_with_ci
from normbench.analysis.claims.xiong import ffn_band
from normbench.analysis.runs import stability_runs

SEEDS = range(5)


def run_rows(
    placement,
    init,
    warmup,
    depth,
    seed,
    loss,
    *,
    status=None,
    update=1.0,
    last_ln=1.2,
    top_grad=1.0,
    lr=1e-3,
    judge=True,
    unigram=3.0,
    window_grad=None,
    d=64,
    optimizer="adam",
    train="all",
):
    """The rows one stability case stores that the claims read; window_grad: the top block's gradient
    norm at steps 100, 200, 300 (the training window)."""
    params = {
        "placement": placement,
        "init": init,
        "warmup": warmup,
        "depth": depth,
        "seed": seed,
        "lr": lr,
        "d": d,
        "ffn": 256,
        "steps": 300 if judge else 1,
        "judge": judge,
        "optimizer": optimizer,
        "train": train,
    }
    status = status or ("stuck" if loss >= unigram - 0.1 else "ok")
    base = {
        "bench": "stability",
        "norm": "layernorm",
        "impl": "module",
        "status": status,
        "case_id": json.dumps(params, sort_keys=True),
        "params": json.dumps(params),
        **params,
    }
    rows = [
        {"metric": "final_loss", "value": loss},
        {"metric": "unigram_loss", "value": unigram},
        {"metric": "model_update", "value": update, "step": 1},
        {"metric": "last_ln_input_norm", "value": last_ln * 8.0, "step": 300},
        {"metric": "grad_norm", "value": top_grad, "step": 1, "site": "block", "layer": depth},
    ]
    rows += [
        {"metric": "grad_norm", "value": window_grad, "step": step, "site": "block", "layer": depth}
        for step in (100, 200, 300)
        if window_grad is not None
    ]
    return [{**base, **r} for r in rows]


def frame(runs) -> pd.DataFrame:
    return pd.DataFrame(
        [r for args in runs for r in run_rows(*args[:6], **(args[6] if len(args) > 6 else {}))]
    )


def state(name, df) -> str:
    return evaluate([name], df).set_index("claim").loc[name, "verdict"]


def controls(
    stuck_loss=3.0,
    warm_loss=2.9,
    init_loss=2.2,
    init_grad=0.9,
    post_grad=1.3,
    init_window=4.0,
    post_window=1.0,
):
    runs = []
    for seed in SEEDS:
        jitter = 1 + seed / 100  # seed-to-seed spread, so that intervals have a width
        for depth in (12, 18):
            runs.append(
                ("post", "xavier", 0, depth, seed, stuck_loss, {"last_ln": 3.0, "top_grad": post_grad})
            )
            post = {"last_ln": 2.6, "top_grad": post_grad, "window_grad": post_window}
            runs.append(("post", "xavier", 100, depth, seed, warm_loss, post))
            init = {"last_ln": 1.5, "top_grad": init_grad * jitter, "window_grad": init_window * jitter}
            runs.append(("post", "depth_scaled", 100, depth, seed, init_loss, init))
    return runs


def test_stuck_and_not_converged_claims():
    df = frame(controls())
    assert state("postln_no_warmup_stuck_deep", df) == "PASS"
    assert state("postln_warmup_not_converged_very_deep", df) == "PASS"  # 0.7 nats behind, every seed
    assert state("stuck_ln_input_large", df) == "PASS"
    escaped = frame(controls(stuck_loss=2.5))  # no-warmup runs that learn: a counter-example
    assert state("postln_no_warmup_stuck_deep", escaped) == "FAIL"
    close = frame(controls(warm_loss=2.45))  # 0.25 nats behind, not stuck: converged by the definition
    assert state("postln_warmup_not_converged_very_deep", close) == "FAIL"


def test_not_converged_is_judged_against_the_reference_at_the_same_seed_and_depth():
    runs = stability_runs(
        frame(
            [("post", "xavier", 100, 18, s, loss) for s, loss in enumerate([2.55, 2.45, 2.9])]
            + [("post", "depth_scaled", 100, 18, s, 2.2) for s in range(2)]
        )
    )
    group, ref = runs[runs["init"] == "xavier"], runs[runs["init"] == "depth_scaled"]
    flags = not_converged(group, ref, compared=("init",)).set_axis(group["seed"]).to_dict()
    assert flags[0] == True and flags[1] == False  # 0.35 and 0.25 nats behind  # noqa: E712
    assert math.isnan(flags[2])  # seed 2 has no reference run


def test_a_documented_disagreement_reads_not_reproduced_only_inside_its_range():
    smaller = frame(controls(init_grad=0.6, post_grad=1.3))  # step-1 ratio ≈ 0.47: the documented one
    verdict = evaluate(["top_block_grad_at_init"], smaller).iloc[0]
    assert verdict["verdict"] == "NOT REPRODUCED" and "Known:" in verdict["numbers"]
    assert verdict["seeds"] == "5 (0–4)" and verdict["CI"].startswith("L=12 ratio [")
    assert state("top_block_grad_at_init", frame(controls(init_grad=1.6))) == "PASS"
    # a planted regression: the 1/k_l model's top gradient collapses to a fifth of Post-LN's. It fails in
    # the documented direction but far beyond the documented size: FAIL, never the known disagreement;
    # and a ratio that moved toward 1 without reaching it is no longer the documented one either
    collapsed = evaluate(["top_block_grad_at_init"], frame(controls(init_grad=0.25))).iloc[0]
    assert collapsed["verdict"] == "FAIL" and "Outside the documented disagreement" in collapsed["numbers"]
    assert state("top_block_grad_at_init", frame(controls(init_grad=1.15))) == "FAIL"  # ratio ≈ 0.9


def test_a_fail_without_the_disagreements_quantity_stays_fail():
    from normbench.analysis.claims import FAIL, Claim, Disagreement, Verdict, judge

    known = Disagreement("measured smaller", "ratio", 0.5, 1.0, "a ratio above 1 or below 0.5")
    check = Claim("c", "s", "st", "t", lambda df: Verdict(FAIL, "n"), known)
    assert judge(check, pd.DataFrame()).verdict == "FAIL"  # nothing measured: not covered
    inside = Claim("c", "s", "st", "t", lambda df: Verdict(FAIL, "n", measured=(0.7, 0.8)), known)
    assert judge(inside, pd.DataFrame()).verdict == "NOT REPRODUCED"
    one_out = Claim("c", "s", "st", "t", lambda df: Verdict(FAIL, "n", measured=(0.7, 1.4)), known)
    assert judge(one_out, pd.DataFrame()).verdict == "FAIL"  # every measured value must be in range


def test_top_block_gradient_is_judged_over_the_training_window():
    assert state("top_block_grad_postln_init_larger", frame(controls())) == "PASS"  # ×4 over steps 100-300
    assert state("top_block_grad_postln_init_larger", frame(controls(init_window=0.8))) == "FAIL"
    # step 1 does not enter the window: a larger step-1 gradient cannot rescue a smaller one in training
    assert (
        state("top_block_grad_postln_init_larger", frame(controls(init_grad=3.0, init_window=0.8))) == "FAIL"
    )


def test_claims_pair_runs_on_every_swept_parameter():
    # two widths: the d = 128 runs of one group must not be paired with the d = 64 runs of the other
    runs = [("post", "xavier", w, 12, s, 3.0 if w == 0 else 2.6, {"d": 64}) for s in SEEDS for w in (0, 100)]
    runs += [("post", "xavier", 0, 12, s, 2.5, {"d": 128}) for s in SEEDS]  # no warmup-100 twin at d = 128
    verdict = evaluate(["warmup_helps_at_12"], frame(runs)).iloc[0]
    assert verdict["verdict"] == "PASS" and "over 5 pairs" in verdict["numbers"]
    pairs = paired(stability_runs(frame(runs)), {"warmup": 0}, {"warmup": 100})
    assert len(pairs) == 5 and set(pairs["d"]) == {64}


def test_behind_reference_pairs_on_every_key_the_caller_does_not_name():
    """Post-LN + warm-up at d = 128 against Post-LN-init + warm-up at d = 64 (and the warm-up-300 control
    at 128 against 1/k_l at 64) are no pairs: both claims have no data, where the old rule (match only the
    keys whose values the two groups share) paired them by seed and read PASS."""
    very_deep = [("post", "xavier", 100, 18, s, 2.9, {"d": 128}) for s in SEEDS]
    very_deep += [("post", "depth_scaled", 100, 18, s, 2.2, {"d": 64}) for s in SEEDS]
    assert state("postln_warmup_not_converged_very_deep", frame(very_deep)) == "NO DATA"
    at_12 = [("post", "xavier", 300, 12, s, 2.9, {"d": 128}) for s in SEEDS]
    at_12 += [("post", "depth_scaled", 0, 12, s, 2.2, {"d": 64}) for s in SEEDS]
    assert state("postln_init_trains_without_warmup_at_12", frame(at_12)) == "NO DATA"
    # both widths in both groups: each run is judged against its own width's reference
    mixed = [
        ("post", "xavier", 100, 18, s, 2.9 if d == 64 else 2.3, {"d": d}) for s in SEEDS for d in (64, 128)
    ]
    mixed += [
        ("post", "depth_scaled", 100, 18, s, 2.2 if d == 64 else 2.25, {"d": d})
        for s in SEEDS
        for d in (64, 128)
    ]
    runs = stability_runs(frame(mixed))
    group, ref = runs[runs["init"] == "xavier"], runs[runs["init"] == "depth_scaled"]
    gaps = behind_reference(group, ref, compared=("init",)).groupby(group["d"]).mean()
    assert gaps.to_dict() == pytest.approx({64: 0.7, 128: 0.05})
    assert state("postln_warmup_not_converged_very_deep", frame(mixed)) == "FAIL"  # d = 128 converged


def test_warmup_helps_needs_the_paired_interval_above_zero():
    helps = [("post", "xavier", w, 12, s, 3.0 if w == 0 else 2.6 + s / 50) for s in SEEDS for w in (0, 100)]
    assert state("warmup_helps_at_12", frame(helps)) == "PASS"
    mixed = [
        ("post", "xavier", w, 12, s, 3.0 if w == 0 else (2.5 if s % 2 else 3.4))
        for s in SEEDS
        for w in (0, 100)
    ]
    assert state("warmup_helps_at_12", frame(mixed)) == "FAIL"  # mean gain > 0, interval straddles 0


def updates(post_slope, deep_slope, *, optimizer="adam", train="all", lrs=(1e-4,), placements=None):
    placements = placements or (
        ("post", "xavier", 1.0, post_slope),
        ("deepnorm", "deepnorm", 0.05, deep_slope),
    )
    return [
        (
            p,
            i,
            0,
            L,
            s,
            3.0,
            {
                "lr": lr,
                "judge": False,
                "update": lr * c * L**k * (1 + s / 100),
                "optimizer": optimizer,
                "train": train,
            },
        )
        for p, i, c, k in placements
        for L in (6, 12, 24, 48)
        for s in SEEDS
        for lr in lrs
    ]


def sgd_deepnorm(slope, lrs=(1e-2, 1e-3), curvature=0.0):
    """DeepNorm one-step SGD runs on the β-scaled matrices; curvature: a second-order term, η² · 1e3."""
    rows = updates(
        0,
        slope,
        optimizer="sgd",
        train="beta_scaled",
        lrs=lrs,
        placements=(("deepnorm", "deepnorm", 1.0, slope),),
    )
    for r in rows:
        r[6]["update"] *= 1 + curvature * r[6]["lr"] * 1e3
    return rows


def test_model_update_claims_in_their_settings():
    adam = updates(0.5, 0.57)  # DeepNorm grows ×3.3 over 6 → 48 under Adam on every parameter
    df = frame(adam + sgd_deepnorm(0.06))  # and ×1.13 under SGD on the β-scaled matrices
    assert state("update_postln_grows_deepnorm_fifth", df) == "PASS"
    assert state("update_deepnorm_nearly_constant", df) == "PASS"  # judged in DeepNet's setting only
    assert state("update_first_order_regime", df) == "PASS"
    report = evaluate(["update_deepnorm_growth_attribution"], df).iloc[0]
    assert report["verdict"] == "REPORTED" and "adam/all η=0.0001: ×3.27" in report["numbers"]
    assert state("update_deepnorm_nearly_constant", frame(adam + sgd_deepnorm(0.57))) == "FAIL"
    assert state("update_deepnorm_nearly_constant", frame(adam)) == "NO DATA"  # Adam runs are not its setting
    assert state("update_first_order_regime", frame(sgd_deepnorm(0.06, curvature=1.0))) == "FAIL"
    assert state("update_postln_grows_deepnorm_fifth", frame(updates(-0.3, 0.0))) == "FAIL"


def with_width(rows, d):
    return [(*r[:6], {**r[6], "d": d}) for r in rows]


def test_update_claims_judge_each_width_and_learning_rate_apart():
    """Runs at two widths (or two Adam learning rates) are two settings, each judged on its own; pooled,
    the planted failure at one of them was averaged away and the claim read PASS."""
    growing, shrinking = with_width(sgd_deepnorm(0.25), 64), with_width(sgd_deepnorm(-0.25), 128)
    assert state("update_deepnorm_nearly_constant", frame(with_width(sgd_deepnorm(0.06), 64))) == "PASS"
    v = evaluate(["update_deepnorm_nearly_constant"], frame(growing + shrinking)).iloc[0]
    assert v["verdict"] == "FAIL" and "d=64" in v["numbers"] and "d=128" in v["numbers"]
    # Adam at two lr: DeepNorm half of Post-LN at one (not 'much smaller'), a tenth at the other
    close = updates(
        0.5, 0.5, lrs=(1e-4,), placements=(("post", "xavier", 1.0, 0.5), ("deepnorm", "deepnorm", 0.5, 0.5))
    )
    far = updates(
        0.5, 0.5, lrs=(1e-3,), placements=(("post", "xavier", 10.0, 0.5), ("deepnorm", "deepnorm", 0.05, 0.5))
    )
    assert state("update_postln_grows_deepnorm_fifth", frame(far)) == "PASS"
    assert state("update_postln_grows_deepnorm_fifth", frame(close + far)) == "FAIL"
    attribution = evaluate(["update_deepnorm_growth_attribution"], frame(growing + shrinking)).iloc[0][
        "numbers"
    ]
    assert "d=64" in attribution and "d=128" in attribution


def test_stuck_onset_must_not_move_deeper_as_lr_grows():
    def grid(onsets):
        return [
            ("post", "xavier", 0, L, s, 3.0 if L >= onset else 2.0, {"lr": lr})
            for lr, onset in onsets.items()
            for L in (6, 12, 18)
            for s in range(3)
        ]

    assert state("stuck_onset_falls_with_lr", frame(grid({1e-4: 99, 1e-3: 12, 3e-3: 6}))) == "PASS"
    assert state("stuck_onset_falls_with_lr", frame(grid({1e-4: 6, 1e-3: 12}))) == "FAIL"


def init_frame(increment, *, ffn=64, placement="pre", embed="unit", qk="zero", depths=(6, 12, 24), grad=None):
    rows = []
    for depth in depths:
        for seed in SEEDS:
            params = {
                "placement": placement,
                "init": "xavier",
                "depth": depth,
                "seed": seed,
                "d": 64,
                "ffn": ffn,
                "embed": embed,
                "qk_init": qk,
            }
            base = {
                "bench": "init",
                "norm": "layernorm",
                "impl": "module",
                "status": "ok",
                "case_id": json.dumps(params, sort_keys=True),
                "params": json.dumps(params),
                **params,
            }
            noise = (seed - 2) / 100
            for layer in range(depth + 1):
                value = 1.0 + layer * (increment + noise)
                rows.append(
                    {**base, "metric": "stream_sq_norm", "value": value, "layer": layer, "site": "stream"}
                )
            if grad is not None:
                rows.append(
                    {
                        **base,
                        "metric": "ffn_grad_norm_of_mean",
                        "value": grad(depth) * (1 + noise),
                        "layer": depth,
                        "site": "fc2",
                    }
                )
    return pd.DataFrame(rows)


def jacobian_frame(depths, sigma=lambda L: 1 / math.sqrt(L), closed_error=0.0):
    """The init bench's ln_jacobian / ln_jacobian_closed rows at the final LN of Xavier Pre-LN (FFN 4d)."""
    rows = []
    for depth in depths:
        for seed in SEEDS:
            params = {"placement": "pre", "init": "xavier", "depth": depth, "seed": seed, "d": 64, "ffn": 256}
            params |= {"embed": "n01", "qk_init": "xavier"}
            base = {"bench": "init", "norm": "layernorm", "impl": "module", "status": "ok"}
            base |= {"case_id": json.dumps(params, sort_keys=True), "params": json.dumps(params), **params}
            value = sigma(depth) * (1 + (seed - 2) / 200)
            for metric, v in (("ln_jacobian", value), ("ln_jacobian_closed", value * (1 + closed_error))):
                rows.append({**base, "metric": metric, "value": v, "site": "final", "layer": depth + 1})
    return pd.DataFrame(rows)


def test_lemma3_without_the_depths_for_its_slope_is_no_data_not_a_fail():
    assert state("lemma3_in_situ", jacobian_frame((6, 12, 24))) == "PASS"
    one_depth = evaluate(["lemma3_in_situ"], jacobian_frame((2,))).iloc[0]  # the norms suite's init runs
    assert one_depth["verdict"] == "NO DATA" and "within 1e-3" in one_depth["numbers"]
    assert state("lemma3_in_situ", jacobian_frame((2,), closed_error=0.01)) == "FAIL"  # that half fails
    assert state("lemma3_in_situ", jacobian_frame((6, 12, 24), sigma=lambda L: 1.0)) == "FAIL"  # flat σ


def test_lemma2_band_under_the_lemmas_assumptions():
    assert state("preln_lemma2_band", init_frame(1.0)) == "PASS"
    assert state("preln_lemma2_band", init_frame(0.4)) == "FAIL"  # every layer adds too little
    # an interval that reaches out of the band fails: the claim is that the increment lies inside it
    assert state("preln_lemma2_band", init_frame(0.47)) == "FAIL"
    assert state("preln_lemma2_band", init_frame(0.6)) == "PASS"
    assert state("preln_lemma2_band", init_frame(1.0, ffn=256)) == "NO DATA"  # not the lemma's setting
    outside = init_frame(0.4, ffn=256, embed="n01", qk="xavier")  # inside the predicted [0.32, 1.32]
    assert state("preln_lemma2_outside_assumptions", outside) == "PASS"
    assert ffn_band(64, 64) == (0.5, 1.5) and ffn_band(256, 64) == pytest.approx((0.32, 1.32))


def test_theorem1_slopes_and_the_sqrt_L_ratio():
    flat_post = init_frame(1.0, ffn=256, placement="post", embed="n01", qk="xavier", grad=lambda L: 1.3)
    falling_pre = init_frame(1.0, ffn=256, embed="n01", qk="xavier", grad=lambda L: 2.0 / math.sqrt(L))
    assert state("last_layer_ffn_grad_vs_depth", pd.concat([flat_post, falling_pre])) == "PASS"
    flat_pre = init_frame(1.0, ffn=256, embed="n01", qk="xavier", grad=lambda L: 0.5)
    assert state("last_layer_ffn_grad_vs_depth", pd.concat([flat_post, flat_pre])) == "FAIL"


def test_statistics_helpers():
    m, lo, hi = mean_ci([1.0, 2.0, 3.0])  # t(0.975, 2) = 4.303, sd 1, n 3
    assert m == 2.0 and hi - m == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    values = pd.DataFrame({"depth": [1, 1, 4, 4], "value": [1.0, 1.0, 2.0, 2.0]})
    assert slope_with_ci(values, "depth") == pytest.approx((0.5, 0.5, 0.5))


def test_claims_without_rows_say_no_data():
    empty = pd.DataFrame({"bench": ["latency"], "metric": ["time"], "value": [1.0], "status": ["ok"]})
    names = [
        "preln_lemma2_band",
        "postln_no_warmup_stuck_deep",
        "update_deepnorm_nearly_constant",
        "admin_output_change",
        "lemma3_in_situ",
        "stuck_onset_falls_with_lr",
    ]
    assert set(evaluate(names, empty)["verdict"]) == {"NO DATA"}


def test_shipped_suites_name_only_known_claims_and_pool_enough_seeds():
    from pathlib import Path

    from normbench.analysis.claims import all_claims
    from normbench.suite.expand import expand
    from normbench.suite.load import load_suite

    suite = load_suite(Path(__file__).parent.parent / "suites" / "paper.toml")
    # + the encoder-decoder's 10, + DeepNet Lemma 4.1's reported line
    assert set(suite.claims) <= set(all_claims()) and len(suite.claims) == 23 + 10 + 1
    seeds = {}
    for c in expand(suite):
        if (
            c.kind in ("init", "stability", "encdec")
            and c.params.get("steps", 300) > 1
            and c.params.get("lr", 1e-3) == 1e-3
        ):
            model = "encdec" if c.kind == "encdec" else "lm"
            key = (
                c.kind,
                c.params["placement"],
                c.params["init"],
                c.params.get("warmup"),
                c.params["depth"],
                model,
            )
            seeds.setdefault(key, set()).add(c.params["seed"])
    thin = {k: len(v) for k, v in seeds.items() if len(v) < 5}
    # fewer than 5 seeds only in the table-only init cases (one seed), the phase diagram's extra depths (3)
    # and the encoder-decoder's training runs (3 seeds: suites/encdec.toml fits well under an hour on 2 cores)
    tables_only = {k for k in thin if k[0] == "init" and k[2] in ("deepnorm", "depth_scaled")}
    assert all(n >= 3 for k, n in thin.items() if k[5] == "encdec"), thin
    lm = {k: n for k, n in thin.items() if k[5] == "lm" and k not in tables_only}
    assert all(n >= 3 and k[4] in (8, 10) for k, n in lm.items()), thin


def lemma2_rows_of_real_models(fc2_gain: float, depths=(4, 8), seeds=range(10), d=32):
    """stream_sq_norm rows measured on the actual model in Lemma 2's setting (Pre-LN, ffn = d, unit
    embeddings, W^Q = W^K = 0); fc2_gain ≠ 1 multiplies every fc2 weight after the init: a wrong model."""
    import torch

    from normbench.models import ModelConfig, TransformerLM

    rows = []
    for depth in depths:
        for seed in seeds:
            torch.manual_seed(seed)
            cfg = ModelConfig(
                vocab=64,
                depth=depth,
                d=d,
                heads=2,
                ffn=d,
                seq=32,
                placement="pre",
                qk_init="zero",
                embed="unit",
            )
            model = TransformerLM(cfg)
            with torch.no_grad():
                for block in model.blocks:
                    block.ffn.fc2.weight.mul_(fc2_gain)
            idx = torch.randint(64, (16, 32), generator=torch.Generator().manual_seed(1234))
            stream: list = []
            with torch.no_grad():
                model.head_input(idx, stream)
            params = {
                "placement": "pre",
                "init": "xavier",
                "depth": depth,
                "seed": seed,
                "d": d,
                "ffn": d,
                "embed": "unit",
                "qk_init": "zero",
            }
            base = {
                "bench": "init",
                "norm": "layernorm",
                "impl": "module",
                "status": "ok",
                "case_id": json.dumps(params, sort_keys=True),
                "params": json.dumps(params),
                **params,
            }
            rows += [
                {
                    **base,
                    "metric": "stream_sq_norm",
                    "value": float((x**2).sum(-1).mean() / d),
                    "layer": layer,
                    "site": "stream",
                }
                for layer, x in enumerate(stream)
            ]
    return pd.DataFrame(rows)


def test_lemma2_passes_the_model_and_fails_a_deliberately_wrong_one():
    assert state("preln_lemma2_band", lemma2_rows_of_real_models(1.0)) == "PASS"
    # fc2 at twice its Xavier gain: the FFN adds ≈ 4 × d/2 per layer, beyond the lemma's 3d/2
    assert state("preln_lemma2_band", lemma2_rows_of_real_models(2.0)) == "FAIL"
