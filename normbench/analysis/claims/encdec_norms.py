"""The PowerNorm paper's translation setting (Shen et al. 2020, Table 1, IWSLT14): BatchNorm or PowerNorm in
the encoder of an encoder-decoder, LayerNorm in the decoder (their train-iwslt14.sh "power power layer
layer"), judged per setting against LayerNorm everywhere, paired by seed, on the held-out loss.

Details: docs/results.md, "BatchNorm's premise"."""

from __future__ import annotations

from normbench.analysis.claims import FAIL, NO_DATA, PASS, Verdict, claim
from normbench.analysis.claims._batch_stats import all_pass, judge_settings
from normbench.analysis.claims.norms import (
    LOSS_MARGIN_WHY,
    MARGIN,
    PN_OFFICIAL,
    PN_SOURCE,
    _gap_text,
    baselines_in,
    paired_gap,
)
from normbench.analysis.claims.stats import fmt_ci, mean_ci, seeds_text
from normbench.analysis.runs import stability_runs

NO_RUNS = "encoder-decoder runs (model = encdec) of LayerNorm and an encoder BatchNorm"


def encoder_norm_runs(frame):
    """Judged encoder-decoder training runs (more than one step) of the settings that hold a batch-statistics
    encoder norm: LayerNorm beside BatchNorm / PowerNorm."""
    runs = stability_runs(frame, model="encdec")
    if runs.empty:
        return runs
    runs = runs[runs["judge"].astype(bool) & (runs["steps"] > 1)]
    return runs if baselines_in(runs) or (runs["norm"] == PN_OFFICIAL).any() else runs.iloc[0:0]


def _verdict(frame, judge, missing: str) -> Verdict:
    states, texts, seeds, cis = judge_settings(encoder_norm_runs(frame), judge)
    if not states:
        return Verdict(NO_DATA, f"needs {missing}, ≥ 2 shared seeds per setting")
    return Verdict(all_pass(states), "; ".join(texts), seeds_text(seeds), "; ".join(cis))


@claim(
    "encdec_bn_encoder_worse_than_ln",
    source=f"{PN_SOURCE}, Table 1 (IWSLT14 BLEU: Transformer_BN 34.4 against Transformer_LN 35.5) and §3; BN "
    "in the encoder only (sIncerass/powernorm train-iwslt14.sh 'batch batch layer layer')",
    statement=f"In the encoder-decoder on the translation task, BatchNorm in the encoder (decoder on LayerNorm) "
    f"has a held-out loss more than {MARGIN} nats above LayerNorm everywhere, paired by seed, per setting and "
    "per BatchNorm baseline run (nn.BatchNorm1d over real source tokens; the authors' MaskSyncBatchNorm)",
    threshold=f"the 95% t-interval of the paired gap (BatchNorm − LayerNorm) above +{MARGIN} nats. Why "
    f"{MARGIN}: {LOSS_MARGIN_WHY}",
)
def encdec_bn_encoder_worse_than_ln(frame):
    def judge(runs):
        states, texts, cis = [], [], []
        for bn in baselines_in(runs):
            pairs = paired_gap(runs, bn)
            if len(pairs) < 2:
                continue
            m, lo, hi = mean_ci(pairs["gap"])
            states.append(PASS if lo > MARGIN else FAIL)
            texts.append(_gap_text(pairs, bn))
            cis.append(f"{bn} − LN {fmt_ci(lo, hi)}")
        return (all_pass(states), "; ".join(texts), "; ".join(cis)) if states else (None, "", "")

    return _verdict(frame, judge, NO_RUNS)


@claim(
    "encdec_pn_encoder_matches_ln_beats_bn",
    source=f"{PN_SOURCE}, Table 1 (IWSLT14 BLEU: Transformer_PN 35.9, LN 35.5, BN 34.4); PowerNorm as its "
    "authors ran it (mask_powernorm.py), in the encoder only ('power power layer layer')",
    statement=f"In the encoder-decoder on the translation task, PowerNorm in the encoder ({PN_OFFICIAL}; decoder "
    f"on LayerNorm) is not behind LayerNorm by more than {MARGIN} nats, and is more than {MARGIN} nats ahead "
    "of each BatchNorm baseline run there, paired by seed, per setting",
    threshold=f"upper end of the 95% t-interval of (PowerNorm − LayerNorm) ≤ +{MARGIN} nats ('outperforms LN' "
    f"is on BLEU at scale; not behind is what a CPU run can falsify), and lower end of (BatchNorm − "
    f"PowerNorm) above +{MARGIN} nats for every BatchNorm baseline",
)
def encdec_pn_encoder_matches_ln_beats_bn(frame):
    def judge(runs):
        vs_ln = paired_gap(runs, PN_OFFICIAL)
        if len(vs_ln) < 2:
            return None, "", ""
        m, lo, hi = mean_ci(vs_ln["gap"])
        states, texts, cis = [PASS if hi <= MARGIN else FAIL], [_gap_text(vs_ln, PN_OFFICIAL)], []
        cis.append(f"PN − LN {fmt_ci(lo, hi)}")
        for bn in baselines_in(runs):
            pairs = paired_gap(runs, bn, reference=PN_OFFICIAL)
            if len(pairs) < 2:
                continue
            bm, blo, bhi = mean_ci(pairs["gap"])
            states.append(PASS if blo > MARGIN else FAIL)
            texts.append(_gap_text(pairs, bn, PN_OFFICIAL))
            cis.append(f"{bn} − PN {fmt_ci(blo, bhi)}")
        if len(states) < 2:
            return None, "", ""
        return all_pass(states), "; ".join(texts), "; ".join(cis)

    return _verdict(
        frame, judge, f"encoder-decoder runs of LayerNorm, {PN_OFFICIAL} and a BatchNorm baseline"
    )
