"""Claims about the norm inside the model: BatchNorm and PowerNorm in a masked-LM encoder
(Shen et al. 2020), DyT (Zhu et al. 2025) and RMSNorm (Zhang & Sennrich 2019) against LayerNorm. The
scale-invariance claims (Ba et al. 2016, §5) are in scale_invariance.py.

Details: docs/claims.md, "How a verdict is reached"."""

from __future__ import annotations

import math

from normbench.analysis.claims import FAIL, NO_DATA, PASS, REPORTED, Verdict, claim
from normbench.analysis.claims._batch_stats import (
    PREMISE_NO_DATA,
    all_pass,
    first_bn_ratios,
    first_bn_site,
    judge_settings,
    overall,
    per_layer_ratios,
    premise_runs,
    settings_verdict,
)
from normbench.analysis.claims.stats import fmt_ci, mean_ci, paired, seeds_text
from normbench.analysis.runs import training_runs

__all__ = ["REPORTED", "paired_gap"]
MARGIN = 0.05  # nats; see LOSS_MARGIN_WHY
LOSS_MARGIN_WHY = (
    f"{MARGIN} nats = 5% in perplexity (e^{MARGIN} = 1.051): 2.5× the ~0.02 nats seed sd of converged runs on "
    "this corpus (DeepNet claims), so seed noise alone does not cross it, and 1/6 of the 0.3-nat "
    "`not_converged` gap, so a model that clearly trains worse does"
)
RATIO_FLOOR = 2.0  # the batch behaves like ≤ n/4 independent tokens


def _runs(frame, **conditions):
    """Training runs (one row per case, with norm, objective and every parameter), filtered."""
    runs = training_runs(frame)
    for key, want in conditions.items():
        if runs.empty:
            break
        runs = runs[runs[key] == want] if key in runs else runs.iloc[0:0]
    return runs


def paired_gap(runs, norm: str, reference: str = "layernorm"):
    """Pairs of runs of `norm` and `reference` by the claims' one rule (stats.paired: the same seed and
    every other swept parameter): final_loss, final_loss_ref, status, status_ref, gap = norm − reference."""
    if runs.empty:
        return runs
    pairs = paired(runs, {"norm": norm}, {"norm": reference})
    pairs = pairs[pairs["final_loss"].map(math.isfinite) & pairs["final_loss_ref"].map(math.isfinite)]
    return pairs.assign(gap=pairs["final_loss"] - pairs["final_loss_ref"])


def _statuses(pairs, col="status") -> str:
    counts = pairs[col].value_counts()
    return "/".join(str(int(counts.get(s, 0))) for s in ("ok", "stuck", "diverged"))


def _gap_text(pairs, norm: str, reference: str = "layernorm") -> str:
    return (
        f"{norm} {pairs['final_loss'].mean():.3f} (ok/stuck/diverged {_statuses(pairs)}) vs {reference} "
        f"{pairs['final_loss_ref'].mean():.3f} ({_statuses(pairs, 'status_ref')}); paired gap "
        f"{pairs['gap'].mean():+.3f} nats over {len(pairs)} pairs"
    )


PN_SOURCE = "Shen et al. 2020 (PowerNorm, arXiv:2003.07845)"


@claim(
    "bn_masked_lm_worse_than_ln",
    source=f"{PN_SOURCE}, abstract: 'a (naive/vanilla) use of BN leads to significant performance degradation "
    "for NLP tasks'; §3: Transformer_BN against Transformer_LN (Fig. 1 / Table 1: BN worse on IWSLT14, PTB)",
    statement=f"In the masked-LM encoder, BatchNorm's held-out loss is more than {MARGIN} nats above "
    "LayerNorm's at the same budget (paired runs), per setting, judged for each BatchNorm baseline run there: "
    "nn.BatchNorm1d over real tokens (batchnorm) and the authors' MaskSyncBatchNorm (batchnorm:official)",
    threshold=f"the 95% t-interval of the paired loss gap (BatchNorm − LayerNorm) lies above +{MARGIN} nats: "
    "the same margin that calls RMSNorm 'comparable', so 'worse' and 'comparable' cannot both hold "
    f"('significant degradation' is more than a difference seed noise could make). Why {MARGIN}: "
    f"{LOSS_MARGIN_WHY}",
)
def bn_masked_lm_worse_than_ln(frame):
    missing = f"needs BatchNorm and LayerNorm {PREMISE_NO_DATA}, ≥ 2 shared seeds"
    return settings_verdict(premise_runs(frame), bn_worse_than_ln, missing)


@claim(
    "bn_fluctuation_beyond_iid",
    source=f"{PN_SOURCE}, §3, Fig. 2 (Fig. 1 in some versions): 'the ResNet20 statistics have orders of "
    "magnitude smaller variation than the running statistics throughout training. However, the corresponding "
    "statistics in Transformer_BN exhibit very high variance with extreme outliers'",
    statement="During masked-LM training on batches of whole sentences (statistics over real tokens), at the "
    "first BatchNorm layer (where the paper's Fig. 2 measures), the batch mean is farther from the running "
    "mean than i.i.d. sampling of the batch's tokens explains: ‖μ_B − μ‖ / (i.i.d. floor) ≥ 2, per setting",
    threshold=f"seed mean of the per-run ratio at the first BatchNorm (median over steps after the burn-in) "
    f"≥ {RATIO_FLOOR:g} and its 95% interval above 1: r = 2 means the batch counts as ≤ n/4 independent "
    "tokens; the CNN control's first BatchNorm is the measured stand-in for the paper's ResNet20 "
    "(`bn_fluctuation_above_cnn`)",
)
def bn_fluctuation_beyond_iid(frame):
    ratios = first_bn_ratios(frame)
    runs = premise_runs(frame)
    if ratios.empty or runs.empty:
        return Verdict(
            NO_DATA, f"needs bn_mean_rel_dist and bn_mean_rel_dist_iid rows of BatchNorm {PREMISE_NO_DATA}"
        )
    layers = per_layer_ratios(frame)

    def judge(g):
        bn = g[(g["norm"] == "batchnorm") & g["case_id"].isin(ratios.index)]
        if bn.empty:
            return None, "", ""
        r = ratios[bn["case_id"]]
        m, lo, hi = mean_ci(r)
        every = layers[layers["case_id"].isin(bn["case_id"])].groupby("layer")["mean_over_iid"].mean()
        text = (
            f"first BatchNorm ({first_bn_site(frame)}): ‖μ_B − μ‖ / i.i.d. floor {m:.2f} over {len(r)} runs; "
            "every layer (reported): " + ", ".join(f"L{int(k)} {v:.2f}" for k, v in every.items())
        )
        return PASS if m >= RATIO_FLOOR and lo > 1 else FAIL, text, f"ratio {fmt_ci(lo, hi)}"

    states, texts, seeds, cis = judge_settings(runs, judge)
    if not states:
        return Verdict(NO_DATA, f"needs fluctuation rows of BatchNorm {PREMISE_NO_DATA}")
    return Verdict(overall(states), "; ".join(texts), seeds_text(seeds), "; ".join(cis))


PN_OFFICIAL = "powernorm:official"
# The two BatchNorm baselines: nn.BatchNorm1d over real tokens, and the PowerNorm authors' MaskSyncBatchNorm
# (what their NormSelect("batch") builds: per-token RMS scaling, padding filled with the mean, momentum 0.05)
BN_BASELINES = ("batchnorm", "batchnorm:official")


def baselines_in(runs) -> list[str]:
    """The BatchNorm baselines these runs hold, in BN_BASELINES order."""
    return [b for b in BN_BASELINES if (runs["norm"] == b).any()] if not runs.empty else []


def above_margin(lo: float, hi: float) -> bool:  # "worse" / "ahead": the interval wholly above +MARGIN
    return lo > MARGIN


def not_behind(lo: float, hi: float) -> bool:  # "not behind beyond the margin": the upper end ≤ +MARGIN
    return hi <= MARGIN


def gap_checks(runs, checks) -> tuple[list[str], list[str], list[str]]:
    """One setting's (states, texts, cis) over checks [(norm, reference, ci label, passes(lo, hi))]: the paired
    gap norm − reference and its 95% interval; a check with fewer than 2 pairs is left out."""
    states, texts, cis = [], [], []
    for norm, reference, label, passes in checks:
        pairs = paired_gap(runs, norm, reference)
        if len(pairs) < 2:
            continue
        m, lo, hi = mean_ci(pairs["gap"])
        states.append(PASS if passes(lo, hi) else FAIL)
        texts.append(_gap_text(pairs, norm, reference))
        cis.append(f"{label} {fmt_ci(lo, hi)}")
    return states, texts, cis


def bn_worse_than_ln(runs):
    """(state, text, ci) of one setting: each BatchNorm baseline's paired gap to LayerNorm, its interval above
    +MARGIN; (None, "", "") without two pairs of any baseline."""
    checks = [(bn, "layernorm", f"{bn} − LN", above_margin) for bn in baselines_in(runs)]
    states, texts, cis = gap_checks(runs, checks)
    return (all_pass(states), "; ".join(texts), "; ".join(cis)) if states else (None, "", "")


@claim(
    "dyt_preln_within_margin_of_ln",
    source="Zhu et al. 2025 (DyT, arXiv:2503.10622), abstract: 'Transformers without normalization can match "
    "or exceed the performance of their normalized counterparts, mostly without hyperparameter tuning'",
    statement=f"In the causal LM with Pre-LN placement, DyT's held-out loss is at most {MARGIN} nats above "
    "LayerNorm's (default α₀ = 0.5, no tuning), paired by seed",
    threshold=f"upper end of the 95% t-interval of the paired gap (DyT − LayerNorm) ≤ {MARGIN} nats "
    f"('match or exceed' is one-sided: lower is fine). Why {MARGIN}: {LOSS_MARGIN_WHY}",
)
def dyt_preln_within_margin_of_ln(frame):
    return _preln_gap(frame, "dyt", "DyT", lambda lo, hi: hi <= MARGIN)


@claim(
    "rmsnorm_preln_matches_ln",
    source="Zhang & Sennrich 2019 (RMSNorm, arXiv:1910.07467), abstract: RMSNorm 'achieves comparable "
    "performance against LayerNorm'",
    statement=f"In the causal LM with Pre-LN placement, RMSNorm's held-out loss is within ±{MARGIN} nats of "
    "LayerNorm's, paired by seed",
    threshold=f"the 95% t-interval of the paired gap (RMSNorm − LayerNorm) inside [−{MARGIN}, +{MARGIN}] nats "
    f"(an equivalence test: 'comparable' is two-sided). Why {MARGIN}: {LOSS_MARGIN_WHY}",
)
def rmsnorm_preln_matches_ln(frame):
    return _preln_gap(frame, "rmsnorm", "RMSNorm", lambda lo, hi: -MARGIN <= lo and hi <= MARGIN)


def _preln_gap(frame, norm: str, name: str, holds) -> Verdict:
    """The paired gap (norm − LayerNorm) of the causal Pre-LN runs, PASS where holds(lo, hi) of its interval."""
    pairs = paired_gap(_runs(frame, objective="causal", placement="pre"), norm)
    if len(pairs) < 2:
        return Verdict(NO_DATA, f"needs causal Pre-LN runs of {name} and LayerNorm, ≥ 2 shared seeds")
    _, lo, hi = mean_ci(pairs["gap"])
    state = PASS if holds(lo, hi) else FAIL
    return Verdict(state, _gap_text(pairs, norm), seeds_text(pairs["seed"]), f"gap {fmt_ci(lo, hi)}")


def _post_ln(frame):
    runs = _runs(frame, objective="causal", placement="post")
    if not runs.empty and "warmup" in runs:
        runs = runs[runs["warmup"] == 0]
    return runs


@claim(
    "dyt_in_postln",
    source="Zhu et al. 2025 (DyT) replace the norms of Pre-LN models (ViT, LLaMA); the issue asks how DyT "
    "fares in Post-LN, which the paper does not test",
    statement="Report only: DyT against LayerNorm in the causal Post-LN model without warmup, per depth",
    threshold="none (REPORTED): no source states a number for Post-LN",
)
def dyt_in_postln(frame):
    runs = _post_ln(frame)
    pairs = paired_gap(runs, "dyt")
    if pairs.empty:
        return Verdict(
            NO_DATA, "needs causal Post-LN runs (no warmup) of DyT and LayerNorm with shared seeds"
        )
    parts = []
    for depth, g in pairs.groupby("depth"):
        m, lo, hi = mean_ci(g["gap"])
        parts.append(f"L={int(depth)}: {_gap_text(g, 'dyt')} {fmt_ci(lo, hi)}")
    return Verdict(REPORTED, "; ".join(parts), seeds_text(pairs["seed"]), "per depth, in the numbers")


@claim(
    "rmsnorm_postln_stuck_onset",
    source="DeepNet (Wang et al. 2022) §3: Post-LN without warmup gets stuck as depth grows; the issue asks "
    "whether RMSNorm (no mean subtraction) changes the depth where that starts",
    statement="Report only: stuck runs per depth of causal Post-LN without warmup, LayerNorm vs RMSNorm, and "
    "each one's onset (the shallowest depth where most seeds are stuck)",
    threshold="none (REPORTED): no source states where RMSNorm's onset should be",
)
def rmsnorm_postln_stuck_onset(frame):
    runs = _post_ln(frame)
    runs = runs if runs.empty else runs[runs["norm"].isin(["layernorm", "rmsnorm"])]
    if runs.empty or runs["norm"].nunique() < 2:
        return Verdict(NO_DATA, "needs causal Post-LN runs (no warmup) of LayerNorm and RMSNorm")
    parts = []
    for norm in ("layernorm", "rmsnorm"):
        g = runs[runs["norm"] == norm]
        stuck = g.assign(s=g["status"] == "stuck").groupby("depth")["s"].agg(["sum", "count"])
        onset = next((int(L) for L, r in stuck.iterrows() if r["sum"] > r["count"] / 2), None)
        cells = ", ".join(f"L={int(L)} {int(r['sum'])}/{int(r['count'])}" for L, r in stuck.iterrows())
        parts.append(
            f"{norm}: stuck {cells}; onset " + (f"L={onset}" if onset else "none in the swept depths")
        )
    return Verdict(REPORTED, "; ".join(parts), seeds_text(runs["seed"]), "—")
