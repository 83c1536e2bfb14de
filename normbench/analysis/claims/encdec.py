"""DeepNet's encoder-decoder claims (Wang et al. 2022, Table 1, §3 Fig. 3-4 at 18L-18L) on the encdec bench's
runs: the constants the model was built with, and DeepNet's control groups in the encoder-decoder. The model-update claims and Theorem 4.3 are in encdec_update.py. Runs are one row each
(`encdec_runs`), N and M the encoder and decoder layers; two groups are compared by the one pairing rule
(`stats.paired` / `behind_reference`: same seed and every other swept parameter)."""

from __future__ import annotations

from normbench.analysis.claims import FAIL, NO_DATA, PASS, Verdict, claim
from normbench.analysis.claims.deepnet import count, learners_verdict, stuck_or_behind, with_runs
from normbench.analysis.claims.stats import (
    NOT_CONVERGED_GAP,
    TRAINING,
    fmt_ci,
    mean_ci,
    pick,
    seeds_text,
)
from normbench.analysis.runs import stability_runs
from normbench.norms import get_norm

GAIN_SE = 4.0  # standard errors a measured gain may sit from its formula (see the threshold)
ALPHA_RTOL = 1e-9


def encdec_runs(frame):
    """One row per encoder-decoder case, with N (encoder layers) and M (decoder layers) resolved. DeepNet's
    claims read per-token norms only: a batch-statistics encoder (PowerNorm's cell) is encdec_norms.py's."""
    runs = stability_runs(frame, "encdec")
    if runs.empty:
        return runs
    runs = runs[~runs["norm"].map(lambda n: get_norm(n.partition(":")[0]).mixes_tokens)]
    if runs.empty:
        return runs
    n = runs["enc_depth"].where(runs["enc_depth"] > 0, runs["depth"]).astype(int)
    m = runs["dec_depth"].where(runs["dec_depth"] > 0, runs["depth"]).astype(int)
    return runs.assign(N=n, M=m, layers=[f"{a}L-{b}L" for a, b in zip(n, m, strict=True)])


def encdec_training_runs(frame):
    runs = encdec_runs(frame)
    return runs if runs.empty else pick(runs, **TRAINING)


on_encdec_runs = with_runs(encdec_runs, "no encoder-decoder runs")
on_encdec_training_runs = with_runs(encdec_training_runs, "no encoder-decoder training runs")


def case_values(frame, metric: str, **labels):
    """Per case_id, the value of one stored metric of the encoder-decoder runs (labels: step, site, ...)."""
    rows = frame[(frame["bench"] == "encdec") & (frame["metric"] == metric)]
    for key, want in labels.items():
        rows = rows[rows[key] == want]
    return rows.groupby("case_id")["value"].mean()


def table1(n: int, m: int) -> dict[str, float]:
    """DeepNet Table 1, encoder-decoder rows, written out here apart from the model's own code."""
    return {
        "alpha_enc": 0.81 * (n**4 * m) ** (1 / 16),
        "alpha_dec": (3 * m) ** (1 / 4),
        "beta_enc": 0.87 * (n**4 * m) ** (-1 / 16),
        "beta_dec": (12 * m) ** (-1 / 4),
    }


# measured gain site -> the Table 1 constant it must equal (1.0: q_proj and k_proj are not scaled)
GAIN_SITES = {
    "enc.beta_scaled": "beta_enc",
    "dec.beta_scaled": "beta_dec",
    "dec.cross_beta_scaled": "beta_dec",
    "enc.qk": None,
    "dec.qk": None,
    "dec.cross_qk": None,
}


@claim(
    "encdec_deepnorm_constants",
    source="DeepNet Table 1, encoder-decoder: 'α_e = 0.81(N⁴M)^{1/16}, β_e = 0.87(N⁴M)^{-1/16}' (encoder), "
    "'α_d = (3M)^{1/4}, β_d = (12M)^{-1/4}' (decoder); Fig. 2a: β is the Xavier gain of ffn, v_proj, out_proj, "
    "q_proj and k_proj keep gain 1 (the decoder's cross-attention v/out take β_d, as torchscale's decoder)",
    statement="Every DeepNorm encoder-decoder run's α per stack and measured Xavier gain per group of matrices "
    "(v/out/fc1/fc2, cross-attention v/out, q/k) equal Table 1's formulas at its (N, M)",
    threshold=f"α within {ALPHA_RTOL:g} relative (arithmetic); each gain within {GAIN_SE:g} standard errors of "
    "its formula (a std estimated from n normal draws has relative SE 1/√(2n): ≈ 0.2% for 6 layers at d = 64; "
    "torchscale's encoder gain 1.15(N⁴M)^{-1/16}, 1.32× the table's, would be > 100 SE away)",
)
@on_encdec_runs
def encdec_deepnorm_constants(frame, runs):
    alphas = pick(runs, placement="deepnorm")
    gains = pick(runs, init="deepnorm")
    if alphas.empty or gains.empty:
        return Verdict(NO_DATA, "needs encoder-decoder runs with placement deepnorm and init deepnorm")
    alpha = {side: case_values(frame, "residual_alpha", site=side) for side in ("enc", "dec")}
    worst_alpha, worst_z, parts, ok = 0.0, 0.0, [], True
    for (n, m), g in alphas.groupby(["N", "M"]):
        want = table1(n, m)
        for side in ("enc", "dec"):
            got = g["case_id"].map(alpha[side])
            if got.isna().any():
                return Verdict(NO_DATA, f"{n}L-{m}L runs lack residual_alpha rows")
            err = float((got / want[f"alpha_{side}"] - 1).abs().max())
            worst_alpha = max(worst_alpha, err)
        parts.append(f"{n}L-{m}L α_e {want['alpha_enc']:.4f}, α_d {want['alpha_dec']:.4f}")
    ok &= worst_alpha <= ALPHA_RTOL
    measured = {site: case_values(frame, "init_gain", site=site) for site in GAIN_SITES}
    rse = {site: case_values(frame, "init_gain_rse", site=site) for site in GAIN_SITES}
    beta_parts = []
    for (n, m), g in gains.groupby(["N", "M"]):
        want = table1(n, m)
        for site, constant in GAIN_SITES.items():
            target = want[constant] if constant else 1.0
            got, se = g["case_id"].map(measured[site]), g["case_id"].map(rse[site])
            if got.isna().any():
                return Verdict(NO_DATA, f"{n}L-{m}L runs lack the init_gain rows of {site}")
            worst_z = max(worst_z, float(((got / target - 1).abs() / se).max()))
        beta_parts.append(
            f"{n}L-{m}L β_e {want['beta_enc']:.4f} (measured {g['case_id'].map(measured['enc.beta_scaled']).mean():.4f}), "
            f"β_d {want['beta_dec']:.4f} ({g['case_id'].map(measured['dec.beta_scaled']).mean():.4f}, cross "
            f"{g['case_id'].map(measured['dec.cross_beta_scaled']).mean():.4f})"
        )
    ok &= worst_z <= GAIN_SE
    return Verdict(
        PASS if ok else FAIL,
        "; ".join(parts + beta_parts)
        + f"; q/k gains 1; worst α rel err {worst_alpha:.1e}, worst gain {worst_z:.1f} SE over {len(gains)} runs",
        seeds_text(gains["seed"]),
        f"largest gain deviation {worst_z:.2f} SE",
    )


@claim(
    "encdec_postln_no_warmup_stuck_deep",
    source="DeepNet §3, Fig. 3c (18L-18L on IWSLT-14): 'Post-LN-init converged while Post-LN did not'; Fig. 4: "
    "'Post-LN has an exploding update ... then nearly no update ... stuck in a spurious local optima'",
    statement="Encoder-decoder Post-LN (Xavier) without warmup is stuck at the unigram loss for N = M ≥ 12, "
    "every seed",
    threshold="every seed stuck (held-out loss within 0.1 nats of the unigram model's on the same target "
    "tokens): the paper reports a run that does not converge, not a rate",
)
def encdec_postln_no_warmup_stuck_deep(frame):
    runs = encdec_training_runs(frame)
    runs = runs if runs.empty else pick(runs, placement="post", init="xavier", warmup=0)
    deep = runs if runs.empty else runs[(runs["N"] >= 12) & (runs["M"] >= 12)]
    if deep.empty:
        return Verdict(NO_DATA, "needs encoder-decoder Post-LN Xavier runs without warmup at N = M ≥ 12")
    parts = [f"{k}: stuck {count(g)}" for k, g in deep.groupby("layers")]
    m, lo, hi = mean_ci(deep["unigram_loss"] - deep["final_loss"])
    return Verdict(
        PASS if bool((deep["status"] == "stuck").all()) else FAIL,
        "; ".join(parts) + f"; unigram − loss {m:.3f} nats",
        seeds_text(deep["seed"]),
        f"unigram − loss {fmt_ci(lo, hi)}",
    )


@claim(
    "encdec_postln_warmup_not_converged_18",
    source="DeepNet §3, Fig. 3c/4 (18L-18L): Post-LN w/ warmup vs Post-LN-init w/ warmup, 'Post-LN-init "
    "converged while Post-LN did not'",
    statement="At N = M ≥ 18, encoder-decoder Post-LN + warmup does not converge: each seed is stuck or "
    "≥ 0.3 nats behind Post-LN-init (1/k_l per stack) + the same warmup (paired runs)",
    threshold=f"every seed stuck or not_converged (≥ {NOT_CONVERGED_GAP} nats behind the paired Post-LN-init "
    "run), as the decoder-only claim",
)
@on_encdec_training_runs
def encdec_postln_warmup_not_converged_18(frame, runs):
    deep = {"placement": "post", "warmup": lambda w: w > 0, "N": lambda n: n >= 18, "M": lambda m: m >= 18}
    group, ref = pick(runs, **deep, init="xavier"), pick(runs, **deep, init="depth_scaled")
    if group.empty or ref.empty:
        return Verdict(
            NO_DATA, "needs Post-LN and Post-LN-init encoder-decoder runs with warmup at N = M ≥ 18"
        )
    if (judged := stuck_or_behind(group, ref)) is None:
        return Verdict(NO_DATA, "the Post-LN and Post-LN-init runs share no seed")
    failed, m, lo, hi = judged
    return Verdict(
        PASS if bool(failed.all()) else FAIL,
        f"Post-LN + warmup {int(failed.sum())}/{len(group)} stuck or not_converged (stuck {count(group)}), loss "
        f"{group['final_loss'].mean():.3f}; Post-LN-init + warmup {ref['final_loss'].mean():.3f} "
        f"(ok {count(ref, 'ok')}); behind by {m:.3f} nats",
        seeds_text(group["seed"]),
        f"gap {fmt_ci(lo, hi)}",
    )


@claim(
    "encdec_learners_learn",
    source="DeepNet §3 (Post-LN-init converges at 18L-18L), §5 (DeepNet trains from 6L-6L to 100L-100L "
    "without warmup where Post-LN fails); Xiong et al. 2020 §4 (Pre-LN trains without warmup)",
    statement="In the encoder-decoder, Pre-LN and DeepNorm without warmup and Post-LN-init + warmup leave "
    "the unigram loss at every depth",
    threshold="every seed ok (neither stuck nor diverged): one failure is a counter-example; the token "
    "accuracy is reported beside it",
)
@on_encdec_training_runs
def encdec_learners_learn(frame, runs):
    accuracy = case_values(frame, "token_accuracy")

    def per_depth(g) -> str:
        return "; " + ", ".join(
            f"{k} {d['final_loss'].mean():.3f} (acc {d['case_id'].map(accuracy).mean():.3f})"
            for k, d in g.groupby("layers")
        )

    return learners_verdict(runs, per_depth, "encoder-decoder ")
