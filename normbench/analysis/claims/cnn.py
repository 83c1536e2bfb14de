"""Claims of the CNN control (the `cnn` bench): where the papers say BatchNorm is the better or steadier
choice, so that the BatchNorm-vs-LayerNorm comparison can come out either way. Runs are paired by the one
rule (the same seed and every other swept parameter of the cnn bench) and judged setting by setting with
the norms claims' one margin (norms.MARGIN), mirrored: "outperforms" = the paired gap's interval above
+MARGIN. The fluctuation claim compares the Transformer's first BatchNorm with the CNN's, as PowerNorm's
Fig. 2 compares Transformer_BN with ResNet20."""

from __future__ import annotations

import math

from normbench.analysis.claims import FAIL, NO_DATA, PASS, Verdict, claim
from normbench.analysis.claims._batch_stats import _first_rows, premise_runs, settings_verdict
from normbench.analysis.claims.norms import LOSS_MARGIN_WHY, MARGIN, PN_SOURCE
from normbench.analysis.claims.stats import fmt_ci, mean_ci, seeds_text
from normbench.benches import get_bench
from normbench.data.images import CLASSES

LN_SOURCE = "Ba, Kiros & Hinton 2016 (Layer Normalization, arXiv:1607.06450)"
ORDER_OF_MAGNITUDE = 10.0  # "orders of magnitude": at least one


def image_runs(frame, model: str):
    """One row per case of the cnn bench that ran with this model ("cnn", or "mlp": mlp_batch.py), the
    bench's per-case summary (runs stored before `model` existed are CNN runs)."""
    import pandas as pd

    rows = frame[(frame["bench"] == "cnn") & ~frame["status"].isin(["failed", "skipped", "unavailable"])]
    runs = get_bench("cnn").per_case(rows) if len(rows) else pd.DataFrame()
    if runs.empty:
        return runs
    kind = runs["model"].fillna("cnn") if "model" in runs else pd.Series("cnn", index=runs.index)
    return runs[kind == model]


def cnn_runs(frame):
    """One row per CNN case that ran: the CNN claims never read the MLP's runs."""
    return image_runs(frame, "cnn")


# the training recipe: each norm is judged at its own best of the recipes run (an lr grid, both optimizers),
# so that a verdict is the norm's, not one shared learning rate's (LayerNorm half-failing at SGD's 0.05)
RECIPE = ("optimizer", "lr", "momentum", "warmup")
CHANCE_LOSS = math.log(len(CLASSES))  # a uniform guess over the ten classes


def varying_keys(runs, skip=("seed", "device", "every")) -> list[str]:
    """The cnn bench's parameters that differ between the runs, seed and bookkeeping left out."""
    return [
        k
        for k in get_bench("cnn").params
        if k in runs and k not in skip and runs[k].astype(str).nunique() > 1
    ]


def at_best_recipe(runs):
    """Per setting (every swept key but the recipe) and norm, the runs of its recipe with the lowest seed-mean
    held-out loss (runs that did not finish ok count as infinitely bad), with `recipe` naming it."""
    import pandas as pd

    recipe = [k for k in RECIPE if k in runs]
    keys = [k for k in varying_keys(runs) if k not in RECIPE]
    score = runs.assign(_loss=runs["final_loss"].where(runs["status"].eq("ok"), math.inf))
    chosen = []
    for _, g in score.groupby(["norm", *keys], dropna=False):
        means = g.groupby(recipe, dropna=False)["_loss"].mean()
        best = means.idxmin() if means.notna().any() else means.index[0]
        best = best if isinstance(best, tuple) else (best,)
        pick_ = g[(g[recipe].astype(str) == [str(v) for v in best]).all(axis=1)]
        chosen.append(pick_.assign(recipe=" ".join(f"{k}={v}" for k, v in zip(recipe, best, strict=True))))
    return pd.concat(chosen).drop(columns="_loss") if chosen else runs.iloc[0:0]


def cnn_gaps(runs, norm: str, reference: str):
    """Per setting: pairs of `norm` and `reference` runs, each at its own best recipe (same seed and every
    other swept parameter), with gap = norm's final loss − reference's."""
    runs = at_best_recipe(runs)
    keys = [k for k in varying_keys(runs) if k not in RECIPE]
    a, b = runs[runs["norm"] == norm], runs[runs["norm"] == reference]
    pairs = a.drop(columns=[k for k in RECIPE if k in a]).merge(
        b.drop(columns=[k for k in RECIPE if k in b]), on=["seed", *keys], suffixes=("", "_ref")
    )
    pairs = pairs[pairs["status"].eq("ok") & pairs["status_ref"].eq("ok")]
    pairs = pairs.assign(gap=pairs["final_loss"] - pairs["final_loss_ref"])
    if not keys:
        return [("", pairs)] if len(pairs) else []
    out = []
    for vals, g in pairs.groupby(keys):
        vals = vals if isinstance(vals, tuple) else (vals,)
        out.append((" ".join(f"{k}={v}" for k, v in zip(keys, vals, strict=True)), g))
    return out


def _outperforms(frame, better: str, worse: str, what: str, needs_learning: bool = False) -> Verdict:
    runs = cnn_runs(frame)
    if runs.empty:
        return Verdict(NO_DATA, f"needs cnn runs of {better} and {worse}")
    parts, ok, seeds, cis, at_chance = [], True, [], [], []
    for label, pairs in cnn_gaps(runs, worse, better):
        if len(pairs) < 2:
            continue
        if needs_learning and pairs["final_loss"].mean() > CHANCE_LOSS - MARGIN:
            at_chance.append(
                f"[{label or 'one setting'}] {worse} at its best recipe ({pairs['recipe'].iloc[0]}) "
                f"{pairs['final_loss'].mean():.3f} nats, accuracy {pairs['accuracy'].mean():.3f}: chance"
            )
            continue
        m, lo, hi = mean_ci(pairs["gap"])
        ok &= lo > MARGIN
        acc = f"accuracy {pairs['accuracy_ref'].mean():.3f} vs {pairs['accuracy'].mean():.3f}"
        parts.append(
            (f"[{label}] " if label else "")
            + f"{better} {pairs['final_loss_ref'].mean():.3f} vs {worse} {pairs['final_loss'].mean():.3f} nats "
            f"({acc}); paired gap {worse} − {better} {m:+.3f} over {len(pairs)} pairs; best recipes: "
            f"{better} {pairs['recipe_ref'].iloc[0]}, {worse} {pairs['recipe'].iloc[0]}"
        )
        seeds += list(pairs["seed"])
        cis.append(f"{label + ': ' if label else ''}gap {fmt_ci(lo, hi)}")
    if not parts:
        why = "; ".join(at_chance) + " (never leaves chance: a speedup over it is not measurable)"
        return Verdict(
            NO_DATA,
            why if at_chance else f"needs cnn runs of {better} and {worse} at ≥ 2 shared seeds ({what})",
        )
    return Verdict(PASS if ok else FAIL, "; ".join(parts + at_chance), seeds_text(seeds), "; ".join(cis))


@claim(
    "bn_cnn_beats_ln",
    source=f"{LN_SOURCE}, §6.7 Convolutional Networks: 'layer normalization offers a speedup over the baseline "
    "model without normalization, but batch normalization outperforms the other methods'",
    statement=f"In the CNN control, BatchNorm's held-out loss is more than {MARGIN} nats below LayerNorm's at "
    "the same budget (paired runs): the bench can show BatchNorm winning",
    threshold=f"each norm at its own best recipe of those run (lr grid, both optimizers: lowest seed-mean "
    f"held-out loss), the 95% t-interval of the paired gap (LayerNorm − BatchNorm) lies above +{MARGIN} nats: "
    f"the norms claims' margin, mirrored, so both directions are judged by one rule. Why {MARGIN}: "
    f"{LOSS_MARGIN_WHY}",
)
def bn_cnn_beats_ln(frame):
    return _outperforms(frame, "batchnorm", "layernorm", "the LN paper's comparison")


@claim(
    "ln_cnn_beats_no_norm",
    source=f"{LN_SOURCE}, §6.7: 'layer normalization offers a speedup over the baseline model without "
    "normalization'",
    statement=f"In the CNN control, LayerNorm's held-out loss is more than {MARGIN} nats below the same CNN "
    "without a norm (identity) at the same budget (paired runs)",
    threshold=f"each at its own best recipe of those run, the 95% t-interval of the paired gap (no norm − "
    f"LayerNorm) above +{MARGIN} nats (a speedup shows as a lower loss at a fixed budget); judged only where "
    f"the no-norm CNN leaves chance (its loss more than {MARGIN} below ln 10 = {CHANCE_LOSS:.3f}), else NO DATA: "
    "a baseline that never learns gives no speedup to measure",
)
def ln_cnn_beats_no_norm(frame):
    return _outperforms(frame, "layernorm", "identity", "LayerNorm against no norm", needs_learning=True)


@claim(
    "bn_fluctuation_above_cnn",
    source=f"{PN_SOURCE}, §3, Fig. 2: 'the ResNet20 statistics have orders of magnitude smaller variation than "
    "the running statistics throughout training. However, the corresponding statistics in Transformer_BN "
    "exhibit very high variance with extreme outliers' (measured at the first BN layer of each, mean and "
    "variance)",
    statement="At the first BatchNorm, the batch mean's offset from the running mean in running-sd units, "
    "|μ_B − μ|/σ (rms over channels, median over training steps after the burn-in), is at least 10× larger "
    "in the masked-LM Transformer on padded sentence batches than in the CNN control (each masked-LM setting, "
    "e.g. each batcher, on its own; the CNN's BatchNorm at its best recipe)",
    threshold=f"the lower end of the Transformer's 95% interval over seeds ≥ {ORDER_OF_MAGNITUDE:g} × the upper "
    "end of the CNN's ('orders of magnitude': at least one). In sd units because the two first layers see "
    "inputs of different scale and a CNN channel's mean can sit near 0 (so ‖μ_B − μ‖/‖μ‖ is ill-posed); the "
    "variance's shift and each one's distance over its own i.i.d. floor are reported beside it (the CNN's "
    "floor counts pixels, which are not independent within an image)",
)
def bn_fluctuation_above_cnn(frame):
    cnn = cnn_runs(frame)
    if not cnn.empty:  # the CNN's BatchNorm at its best recipe, per CNN setting (never pooled over recipes)
        cnn = at_best_recipe(cnn[cnn["status"].eq("ok")])
        cnn = cnn[(cnn["norm"] == "batchnorm") & cnn["first_bn_shift"].notna()]
    lm = _first_rows(frame)
    if lm.empty or "bn_mean_shift_sd" not in lm or len(cnn) < 2:  # a CNN-only run has no LM rows at all
        return Verdict(NO_DATA, FLUCTUATION_NO_DATA)
    lm = (
        lm.dropna(subset=["bn_mean_shift_sd"])
        .groupby("case_id")[["bn_mean_shift_sd", "bn_var_shift", "mean_over_iid"]]
        .mean()
    )
    keys = [k for k in varying_keys(cnn) if k not in RECIPE]
    cnn_settings = list(cnn.groupby(keys)) if keys else [("", cnn)]

    def judge(g):  # one masked-LM setting (batcher, ...) against every CNN setting
        per_lm = lm[lm.index.isin(g.loc[g["norm"] == "batchnorm", "case_id"])]
        if len(per_lm) < 2:
            return None, "", ""
        t_m, t_lo, t_hi = mean_ci(per_lm["bn_mean_shift_sd"])
        state, texts, cis = PASS, [], [f"Transformer {fmt_ci(t_lo, t_hi)}"]
        for vals, c in cnn_settings:
            where = "" if not keys else " ".join(f"{k}={v}" for k, v in zip(keys, _tuple(vals), strict=True))
            c_m, c_lo, c_hi = mean_ci(c["first_bn_shift"])
            state = state if t_lo >= ORDER_OF_MAGNITUDE * c_hi else FAIL
            texts.append(
                f"first BatchNorm |μ_B − μ|/σ: Transformer {t_m:.3g} vs CNN{' ' + where if where else ''} "
                f"({c['recipe'].iloc[0]}) {c_m:.3g} (×{t_m / c_m:.1f}); variance shift "
                f"{per_lm['bn_var_shift'].mean():.3g} vs {c['first_bn_var_shift'].mean():.3g}; ‖μ_B − μ‖ over "
                f"the i.i.d. floor {per_lm['mean_over_iid'].mean():.2f} vs {c['first_bn_over_iid'].mean():.2f}"
            )
            cis.append(f"CNN{' ' + where if where else ''} {fmt_ci(c_lo, c_hi)}")
        return state, "; ".join(texts), ", ".join(cis)

    verdict = settings_verdict(premise_runs(frame), judge, FLUCTUATION_NO_DATA)
    cnn_seeds = seeds_text(list(cnn["seed"]))
    return Verdict(verdict.verdict, verdict.numbers, f"{verdict.seeds}; CNN {cnn_seeds}", verdict.ci)


FLUCTUATION_NO_DATA = (
    "needs BatchNorm runs of the cnn bench and of the masked LM on padded batches, ≥ 2 seeds each, with "
    "batch-statistics rows (|μ_B − μ|/σ)"
)


def _tuple(vals) -> tuple:
    return vals if isinstance(vals, tuple) else (vals,)
