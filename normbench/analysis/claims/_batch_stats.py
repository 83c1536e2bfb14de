"""What the BatchNorm / PowerNorm claims share (norms.py, bn_premise.py): the runs in the PowerNorm
paper's setting (padded batches of whole sentences, statistics over real tokens), judging a claim setting
by setting (every swept parameter but the norm and the seed: seeds of different configurations never share
an interval), and each run's batch-mean fluctuation over its i.i.d. floor at the first BatchNorm."""

from __future__ import annotations

from normbench.analysis.claims import FAIL, NO_DATA, PASS, REPORTED, Verdict
from normbench.analysis.claims.stats import seeds_text, settings
from normbench.analysis.fluctuation import per_run_medians
from normbench.analysis.runs import training_runs

UNITS = ("padded", "bucketed")  # batches of whole sentences or lines: the PowerNorm paper's batches


def premise_runs(frame):
    """Masked-LM runs on batches of whole sentences or lines (batching = padded or bucketed), BatchNorm
    and PowerNorm over the real tokens only: the setting of the PowerNorm paper (translation and LM
    batches of padded sentences; the authors' MaskPowerNorm drops the padding). Runs on
    fixed windows (or stored before batching existed) are not that setting."""
    runs = training_runs(frame)
    if runs.empty or "batching" not in runs:
        return runs.iloc[0:0]
    runs = runs[(runs["objective"] == "masked") & runs["batching"].isin(UNITS)]
    if "max_tokens" in runs and "batch" in runs:  # under a token budget `batch` is unused: no setting's label
        budget = runs["max_tokens"].fillna(0).astype(float) > 0
        runs = runs.assign(batch=runs["batch"].astype(object).where(~budget, None))
    return runs


PREMISE_NO_DATA = (
    "masked-LM runs on padded batches of whole sentences (batching = padded or bucketed: the paper's batches, "
    "statistics over real tokens)"
)


def budgeted(runs) -> bool:
    """Any run batched under a token budget (max_tokens > 0)?"""
    return "max_tokens" in runs and bool((runs["max_tokens"].fillna(0).astype(float) > 0).any())


def judge_settings(runs, judge) -> tuple[list[str], list[str], list, list[str]]:
    """judge(runs of one setting) -> (state, text, ci), per setting (every swept parameter but norm and seed);
    returns (states, texts, seeds, cis) over the settings it could judge (state None: skipped). Where the runs
    hold token-budget settings (the paper's batches, fairseq's --max-tokens), those are the claims' setting
    and a fixed-rows setting beside them is the stress cell: its verdict is shown, REPORTED, not judged."""
    states, texts, seeds, cis = [], [], [], []
    stress_cells = budgeted(runs)
    for label, g in settings(runs):
        state, text, ci = judge(g)
        if state is None:
            continue
        if stress_cells and not budgeted(g) and state in (PASS, FAIL):
            state, text = REPORTED, f"stress cell, fixed rows (would read {state}, not judged): {text}"
        states.append(state)
        texts.append(f"[{label}] {text}" if label else text)
        seeds += list(g["seed"])
        cis.append(f"{label}: {ci}" if label else ci)
    return states, texts, seeds, cis


def all_pass(states) -> str:
    return PASS if states and all(s == PASS for s in states) else FAIL


def overall(states) -> str:
    """The claim's verdict over its settings: PASS/FAIL over the judged ones; REPORTED when none was judged."""
    judged = [s for s in states if s != REPORTED]
    return all_pass(judged) if judged else REPORTED


def per_layer_ratios(frame, norm: str = "batchnorm"):
    """Per (case, layer, site): the run's median ‖μ_B − μ‖ / i.i.d. floor, for one norm's runs."""
    med = per_run_medians(frame)
    if med.empty or "mean_over_iid" not in med:
        return med.iloc[0:0].assign(mean_over_iid=[])
    return med[med["norm"] == norm].dropna(subset=["mean_over_iid"])


def _first_rows(frame, norm: str = "batchnorm"):
    bn = per_layer_ratios(frame, norm)
    if bn.empty:
        return bn
    order = bn.assign(
        _o=[_forward_order(layer, site) for layer, site in zip(bn["layer"], bn["site"], strict=True)]
    )
    return order[order["_o"] == order.groupby("case_id")["_o"].transform("min")]


def first_bn_ratios(frame, norm: str = "batchnorm"):
    """Per case (index case_id): the ratio at the first norm with batch statistics in the forward pass."""
    import pandas as pd

    first = _first_rows(frame, norm)
    return first.groupby("case_id")["mean_over_iid"].mean() if not first.empty else pd.Series(dtype=float)


def first_bn_site(frame, norm: str = "batchnorm") -> str:
    first = _first_rows(frame, norm)
    return str(first["site"].iloc[0]) if not first.empty else "—"


SITE_ORDER = ("embed", "attn", "attn_mid", "attn_out", "ffn", "ffn_mid", "ffn_out")


def _forward_order(layer, site) -> tuple[int, int]:
    """Where a norm sits in the forward pass: (layer, position of its site within the block)."""
    name = str(site).split(".")[-1]
    return (int(layer), SITE_ORDER.index(name) if name in SITE_ORDER else len(SITE_ORDER))


def settings_verdict(runs, judge, missing: str) -> Verdict:
    """A claim judged setting by setting (judge_settings), its verdict over them (overall); NO DATA with
    `missing` when no setting could be judged."""
    states, texts, seeds, cis = judge_settings(runs, judge)
    if not states:
        return Verdict(NO_DATA, missing)
    return Verdict(overall(states), "; ".join(texts), seeds_text(seeds), "; ".join(cis))
