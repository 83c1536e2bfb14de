"""BatchNorm's premise across settings (PowerNorm, Shen et al. 2020, §3): per masked-LM setting (every
swept parameter but the norm and the seed), the paired BatchNorm − LayerNorm loss gap with its interval,
PowerNorm (as its authors ran it) beside it, and what the batches were: their token-histogram variation
against the i.i.d. floor, BatchNorm's batch-mean distance against its own i.i.d. floor at the first
BatchNorm, and the share of padding. REPORTED: the sweep as data, from which a claim's setting is chosen
(docs/results.md), never a verdict tuned on it."""

from __future__ import annotations

from normbench.analysis.claims import NO_DATA, REPORTED, Verdict, claim
from normbench.analysis.claims._batch_stats import first_bn_ratios
from normbench.analysis.claims.norms import MARGIN, PN_OFFICIAL, PN_SOURCE, _runs, paired_gap
from normbench.analysis.claims.stats import fmt_ci, mean_ci, seeds_text, settings


def setting_line(label: str, runs, ratios) -> str | None:
    """One setting's numbers, or None when it lacks BatchNorm/LayerNorm pairs."""
    pairs = paired_gap(runs, "batchnorm")
    if len(pairs) < 2:
        return None
    m, lo, hi = mean_ci(pairs["gap"])
    parts = [f"BN − LN {m:+.3f} {fmt_ci(lo, hi)} ({len(pairs)} pairs)"]
    pn = paired_gap(runs, "batchnorm", reference=PN_OFFICIAL)
    if len(pn) >= 2:
        m2, lo2, hi2 = mean_ci(pn["gap"])
        parts.append(f"BN − PN {m2:+.3f} {fmt_ci(lo2, hi2)}")
    ln = runs[runs["norm"] == "layernorm"]
    parts.append(f"LN {ln['final_loss'].mean():.3f}")
    if "token_hist" in runs and runs["token_hist"].notna().any():
        parts.append(f"hist/iid {runs['token_hist'].mean():.2f}")
    own = ratios[ratios.index.isin(runs["case_id"])]
    if len(own):
        parts.append(f"BN μ/iid {own.mean():.2f}")
    if "pad_fraction" in runs and runs["pad_fraction"].notna().any():
        parts.append(f"pad {runs['pad_fraction'].mean():.2f}")
    return f"[{label or 'one setting'}] " + ", ".join(parts)


@claim(
    "bn_gap_by_setting",
    source=f"{PN_SOURCE}, §3: BatchNorm's degradation in NLP comes from batch statistics that fluctuate "
    "across batches (Fig. 2); the authors batch whole sentences and compute BN over real tokens",
    statement="Report only: per masked-LM setting, BatchNorm − LayerNorm (paired by seed), BatchNorm − "
    "PowerNorm where run, the batches' token-histogram variation over the i.i.d. floor, BatchNorm's first-"
    "layer batch-mean distance over its i.i.d. floor, and the padded share",
    threshold=f"none (REPORTED): the sweep behind the claims' setting; the claims judge 'worse' against "
    f"+{MARGIN} nats",
)
def bn_gap_by_setting(frame):
    runs = _runs(frame, objective="masked")
    if runs.empty:
        return Verdict(NO_DATA, "needs masked-LM runs of BatchNorm and LayerNorm")
    ratios = first_bn_ratios(frame)
    lines = [line for label, g in settings(runs) if (line := setting_line(label, g, ratios)) is not None]
    if not lines:
        return Verdict(NO_DATA, "needs BatchNorm and LayerNorm masked-LM runs, ≥ 2 shared seeds per setting")
    return Verdict(REPORTED, "; ".join(lines), seeds_text(runs["seed"]), "per setting, in the numbers")
