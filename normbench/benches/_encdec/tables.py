"""The encdec bench's report table: per configuration, the status, the
held-out loss and accuracy, and the early model update and norm inputs split by side (DeepNet Thm 4.3)."""

from __future__ import annotations

import math

import pandas as pd

from normbench.benches._lm.summary import by_configuration, trained
from normbench.core.tables import Table


def side_summary(rows) -> pd.DataFrame:
    """One row per case: status, losses, accuracies, the step-1 updates, the largest LN input ‖x‖/√d of
    each side at the last diagnostic step, and the mean block gradient norm of each side at step 1."""
    out = []
    for case_id, r in rows.groupby("case_id", sort=False):
        d = float(r["d"].iloc[0])

        def value(metric, step=None, r=r):
            sel = r[r["metric"] == metric]
            if step is not None:
                sel = sel[sel["step"] == step]
            return sel["value"].mean()  # NaN when absent

        ln = r[r["metric"] == "ln_input_norm"]
        last = ln[ln["step"] == ln["step"].max()] if len(ln) else ln
        grads = r[(r["metric"] == "grad_norm") & (r["step"] == 1)]
        out.append(
            {
                "case_id": case_id,
                "status": r["status"].iloc[0],
                "final_loss": value("final_loss"),
                "unigram_loss": value("unigram_loss"),
                "token_accuracy": value("token_accuracy"),
                "sequence_accuracy": value("sequence_accuracy"),
                "update_dec1": value("model_update", 1),
                "update_enc1": value("enc_update", 1),
                "update_via_enc1": value("dec_update_via_enc", 1),
                "ln_enc_max": last[last["site"].str.startswith("enc.")]["value"].max() / math.sqrt(d),
                "ln_dec_max": last[last["site"].str.startswith("dec.")]["value"].max() / math.sqrt(d),
                "grad_enc1": grads[grads["site"] == "enc"]["value"].mean(),
                "grad_dec1": grads[grads["site"] == "dec"]["value"].mean(),
                "wall": value("case_wall_s"),
            }
        )
    return pd.DataFrame(out)


def encdec_tables(frame) -> list[Table]:
    rows = trained(frame)
    if rows.empty:
        return []
    summary, keys = by_configuration(rows, side_summary)
    table = []
    for key, g in summary.groupby(keys, sort=True, dropna=False):
        counts = g["status"].value_counts()
        row = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        row.update(
            {
                "runs": len(g),
                "status": ", ".join(f"{s} {counts[s]}" for s in ("ok", "stuck", "diverged") if s in counts),
                "final loss": f"{g['final_loss'].mean():.3f}",
                "unigram − loss": f"{(g['unigram_loss'] - g['final_loss']).mean():.3f}",
                "token acc": f"{g['token_accuracy'].mean():.3f}",
                "ΔF dec @1": f"{g['update_dec1'].mean():.3g}",
                "ΔF enc @1": f"{g['update_enc1'].mean():.3g}",
                "dec via enc @1": f"{g['update_via_enc1'].mean():.3g}",
                "LN ‖x‖/√d enc, dec": f"{g['ln_enc_max'].mean():.2f}, {g['ln_dec_max'].mean():.2f}",
                "grad enc, dec @1": f"{g['grad_enc1'].mean():.3g}, {g['grad_dec1'].mean():.3g}",
                "s/run": f"{g['wall'].mean():.1f}",
            }
        )
        table.append(row)
    notes = [
        "An encoder-decoder on generated pairs (task); depth L is L encoder and L decoder layers "
        "unless enc_depth / dec_depth say otherwise. Losses and accuracies over the held-out real target tokens "
        "(teacher forcing); unigram − loss as in the table above.",
        "ΔF dec @1: mean over target tokens of ‖F_ed(θ₁) − F_ed(θ₀)‖ (the head's input); ΔF enc @1: the same "
        "over source tokens of the encoder's output (the memory); dec via enc @1: the decoder at θ₀ reading the "
        "memory of θ₁, the encoder's update carried through cross-attention (DeepNet Thm 4.3's first term).",
        "LN ‖x‖/√d: the largest mean input norm over each side's norms at the last diagnostic step, over √d; "
        "grad @1: mean per-layer gradient norm of the encoder's and the decoder's blocks at step 1.",
    ]
    return [
        Table(
            "Encoder–decoder: loss, accuracy, and the update and norm inputs by side",
            pd.DataFrame(table),
            notes,
        )
    ]
