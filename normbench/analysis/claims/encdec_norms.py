"""The PowerNorm paper's translation setting (Shen et al. 2020, Table 1, IWSLT14): BatchNorm or PowerNorm in
the encoder of an encoder-decoder, LayerNorm in the decoder (their train-iwslt14.sh "power power layer
layer"), judged per setting against LayerNorm everywhere, paired by seed, on the held-out loss.

Details: docs/results.md, "BatchNorm's premise"."""

from __future__ import annotations

from normbench.analysis.claims import Verdict, claim
from normbench.analysis.claims._batch_stats import all_pass, settings_verdict
from normbench.analysis.claims.norms import (
    LOSS_MARGIN_WHY,
    MARGIN,
    PN_OFFICIAL,
    PN_SOURCE,
    above_margin,
    baselines_in,
    bn_worse_than_ln,
    gap_checks,
    not_behind,
)
from normbench.analysis.runs import stability_runs

NO_RUNS = "encdec runs of LayerNorm and an encoder BatchNorm"


def encoder_norm_runs(frame):
    """Judged encoder-decoder training runs (more than one step) of the settings that hold a batch-statistics
    encoder norm: LayerNorm beside BatchNorm / PowerNorm."""
    runs = stability_runs(frame, "encdec")
    if runs.empty:
        return runs
    runs = runs[runs["judge"].astype(bool) & (runs["steps"] > 1)]
    return runs if baselines_in(runs) or (runs["norm"] == PN_OFFICIAL).any() else runs.iloc[0:0]


def _verdict(frame, judge, missing: str) -> Verdict:
    return settings_verdict(encoder_norm_runs(frame), judge, f"needs {missing}, ≥ 2 shared seeds per setting")


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
    return _verdict(frame, bn_worse_than_ln, NO_RUNS)


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
        checks = [(PN_OFFICIAL, "layernorm", "PN − LN", not_behind)]
        checks += [(bn, PN_OFFICIAL, f"{bn} − PN", above_margin) for bn in baselines_in(runs)]
        states, texts, cis = gap_checks(runs, checks)
        if len(states) < 2 or not cis[0].startswith("PN − LN"):
            return None, "", ""
        return all_pass(states), "; ".join(texts), "; ".join(cis)

    return _verdict(
        frame, judge, f"encoder-decoder runs of LayerNorm, {PN_OFFICIAL} and a BatchNorm baseline"
    )
