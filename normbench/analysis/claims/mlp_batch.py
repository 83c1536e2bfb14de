"""The LayerNorm paper's batch-size experiment (Ba et al. 2016, §6.6, Fig. 6): its permutation-invariant
MLP at batch 128 and batch 4 (the cnn bench with model = "mlp", on the generated images). Each norm's
change from the large to the small batch is paired by seed and every other swept parameter; the runs at
the two batch sizes see the same number of images (steps × batch), so the batch size is what changes."""

from __future__ import annotations

from normbench.analysis.claims import FAIL, NO_DATA, PASS, Verdict, claim
from normbench.analysis.claims.cnn import LN_SOURCE, image_runs, varying_keys
from normbench.analysis.claims.norms import LOSS_MARGIN_WHY, MARGIN
from normbench.analysis.claims.stats import fmt_ci, mean_ci, seeds_text

SIZE_KEYS = ("batch", "steps")  # what the comparison changes (steps with it, at a fixed number of images)


def batch_changes(runs, norm: str):
    """Per setting (every swept key but norm, batch, steps and seed): (label, large, small, pairs) with one row
    per seed: the norm's held-out loss at the largest and at the smallest batch and `change` = small − large."""
    import pandas as pd

    keys = [k for k in varying_keys(runs) if k not in (*SIZE_KEYS, "norm")]
    out = []
    groups = runs.groupby(keys, dropna=False) if keys else [((), runs)]
    for vals, g in groups:
        vals = vals if isinstance(vals, tuple) else (vals,)
        label = " ".join(f"{k}={v}" for k, v in zip(keys, vals, strict=True))
        g = g[g["norm"] == norm]
        if g["batch"].nunique() < 2:
            continue
        large, small = g["batch"].max(), g["batch"].min()
        a, b = g[g["batch"] == large], g[g["batch"] == small]
        pairs = a.merge(b, on="seed", suffixes=("_large", "_small"))
        ok = pairs["status_large"].eq("ok") & pairs["status_small"].eq("ok")
        pairs = pairs[ok].assign(change=lambda p: p["final_loss_small"] - p["final_loss_large"])
        out.append((label, int(large), int(small), pd.DataFrame(pairs)))
    return out


def _same_images(pairs) -> bool:
    seen = pairs["steps_large"] * pairs["batch_large"], pairs["steps_small"] * pairs["batch_small"]
    return bool((seen[0] == seen[1]).all())


@claim(
    "ln_batch_size_robust_bn_degrades",
    source=f"{LN_SOURCE}, §6.6 Permutation invariant MNIST, Fig. 6 (784-1000-1000-10, Adam, batch 128 left, "
    "batch 4 right): 'layer normalization is robust to the batch-sizes and exhibits a faster training "
    "convergence comparing to batch normalization that is applied to all layers'",
    statement=f"In the MLP on the generated images, going from batch 128 to batch 4 at the same number of "
    f"images seen, LayerNorm's held-out loss does not rise by more than {MARGIN} nats, and BatchNorm's rises "
    f"by more than LayerNorm's plus {MARGIN}",
    threshold=f"per setting, paired by seed: the 95% t-interval of LayerNorm's change (small − large batch) "
    f"has its upper end ≤ +{MARGIN} ('robust'), and that of BatchNorm's change minus LayerNorm's lies above "
    f"+{MARGIN} ('degrades', the interaction, so a loss both share is not counted against BatchNorm). The "
    f"paper gives curves, not a number; {MARGIN} is the norms claims' one margin: {LOSS_MARGIN_WHY}. Runs at "
    "the two batch sizes must see the same number of images (steps × batch), else NO DATA",
)
def ln_batch_size_robust_bn_degrades(frame):
    runs = image_runs(frame, "mlp")
    if runs.empty:
        return Verdict(
            NO_DATA, 'needs cnn-bench runs with model = "mlp" of layernorm and batchnorm at two batches'
        )
    ln, bn = {lab: p for lab, *_, p in batch_changes(runs, "layernorm")}, batch_changes(runs, "batchnorm")
    parts, cis, seeds, ok, judged = [], [], [], True, 0
    for label, large, small, bn_pairs in bn_changes_with_ln(bn, ln):
        ln_pairs = ln[label]
        both = ln_pairs[["seed", "change"]].merge(
            bn_pairs[["seed", "change"]], on="seed", suffixes=("_ln", "_bn")
        )
        if len(both) < 2 or not (_same_images(ln_pairs) and _same_images(bn_pairs)):
            continue
        judged += 1
        _, ln_lo, ln_hi = mean_ci(both["change_ln"])
        extra = both["change_bn"] - both["change_ln"]
        _, x_lo, x_hi = mean_ci(extra)
        ok &= ln_hi <= MARGIN and x_lo > MARGIN
        where = f"[{label}] " if label else ""
        parts.append(
            f"{where}batch {large} → {small}: LayerNorm {_losses(ln_pairs)} ({both['change_ln'].mean():+.3f}), "
            f"BatchNorm {_losses(bn_pairs)} ({both['change_bn'].mean():+.3f}); accuracy at batch {small} LN "
            f"{ln_pairs['accuracy_small'].mean():.3f}, BN {bn_pairs['accuracy_small'].mean():.3f}; BN − LN "
            f"{extra.mean():+.3f} more"
        )
        cis.append(f"{where}LN change {fmt_ci(ln_lo, ln_hi)}, BN − LN change {fmt_ci(x_lo, x_hi)}")
        seeds += list(both["seed"])
    if not judged:
        return Verdict(
            NO_DATA,
            "needs layernorm and batchnorm MLP runs at two batch sizes, ≥ 2 shared seeds, each seeing the same "
            "number of images (steps × batch)",
        )
    return Verdict(PASS if ok else FAIL, "; ".join(parts), seeds_text(seeds), "; ".join(cis))


def bn_changes_with_ln(bn, ln):
    """The BatchNorm settings that have LayerNorm runs too."""
    return [(label, large, small, pairs) for label, large, small, pairs in bn if label in ln]


def _losses(pairs) -> str:
    return f"{pairs['final_loss_large'].mean():.3f} → {pairs['final_loss_small'].mean():.3f}"
