"""The stability bench's report tables: status and final loss per configuration, the early model update and
gradient (one summary row per case: _lm/summary.py)."""

from __future__ import annotations

import math

import pandas as pd

from normbench.benches._lm.summary import by_configuration, case_summary, trained
from normbench.core.tables import Table
from normbench.norms import variant_label


def stability_tables(frame) -> list[Table]:
    frame = trained(frame)
    if frame.empty:
        return []
    if "impl" in frame:  # powernorm:official is its own row, not pooled with Algorithm 1
        labels = {
            (n, i): variant_label(n, i)
            for n, i in frame[["norm", "impl"]].drop_duplicates().itertuples(index=False)
        }
        frame = frame.assign(norm=[labels[k] for k in zip(frame["norm"], frame["impl"], strict=True)])
    summary, keys = by_configuration(frame, case_summary, extra=("d",))
    table = []
    for key, g in summary.groupby(keys, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        counts = g["status"].value_counts()
        row = dict(zip(keys, key, strict=True))
        sd = g["final_loss"].std()
        row.update(
            {
                "runs": len(g),
                "status": ", ".join(f"{s} {counts[s]}" for s in ("ok", "stuck", "diverged") if s in counts),
                "final loss": f"{g['final_loss'].mean():.3f}"
                + (f" ±{sd:.3f}" if len(g) > 1 and not math.isnan(sd) else ""),
                "train loss": f"{g['train_loss'].mean():.3f}",
                "unigram − loss": f"{(g['unigram_loss'] - g['final_loss']).mean():.3f}",
                "step-1 update": f"{g['update1'].mean():.3g}",
                "last-LN ‖x‖/√d": f"{(g['last_ln'] / g['d'].map(math.sqrt)).mean():.2f}",
                "s/run": f"{g['wall'].mean():.1f}",
            }
        )
        table.append(row)
    unigram = summary["unigram"].dropna().unique()
    notes = [
        "final loss: held-out loss after training, mean ±sd over seeds (nats/token); train loss: mean of the "
        "last 10 training losses; status counts over seeds.",
        f"unigram entropy of the training text: {', '.join(f'{u:.3f}' for u in unigram)} nats; unigram − loss: the "
        "unigram model's loss on the same held-out windows minus the final loss; stuck when it is < stuck_tol.",
        "step-1 update: mean over probe tokens of ‖F(x,θ₁) − F(x,θ₀)‖₂, F = the head's input (DeepNet Fig. 4a).",
        "last-LN ‖x‖/√d: input norm of the norm feeding the head, at the last diagnostic step, over √d (DeepNet Fig. 4b).",
    ]
    if summary["optimal"].notna().any():
        notes.append(f"optimal loss (Markov entropy rate): {summary['optimal'].dropna().iloc[0]:.3f} nats.")
    tables = [
        Table(
            "Stability: final loss, status, step-1 model update, last-LN input norm",
            pd.DataFrame(table),
            notes,
        )
    ]
    tables.append(early_table(frame, keys))
    if "depth" in keys and len(keys) > 1:
        other = [k for k in keys if k != "depth"]
        wide = summary.groupby([*other, "depth"], dropna=False)["final_loss"].mean().unstack("depth")
        wide.columns = [f"L={c}" for c in wide.columns]
        tables.append(Table("Stability: mean final loss by depth", wide.round(3).reset_index().astype(str)))
    return tables


def early_table(frame, keys) -> Table:
    """The model update at a few steps (DeepNet Fig. 4a: Post-LN's explodes at once, then barely moves) and
    the top block's gradient norm at step 1 (Fig. 3a), means over seeds."""

    updates = frame[frame["metric"] == "model_update"]
    last = int(updates["step"].max())
    steps = [s for s in (1, 10, 50, 100) if s < last and s in set(updates["step"])] + [last]
    upd = updates[updates["step"].isin(steps)].pivot_table(
        index=keys, columns="step", values="value", aggfunc="mean"
    )
    upd.columns = [f"update @{int(c)}" for c in upd.columns]
    grads = frame[(frame["metric"] == "grad_norm") & (frame["step"] == 1) & (frame["site"] == "block")]
    top = grads[grads["layer"] == grads["depth"]].groupby(keys)["value"].mean().rename("top block grad @1")
    cells = pd.concat([upd, top], axis=1).map(lambda v: f"{v:.3g}")
    return Table(
        "Stability: model update per token over training, top block gradient at step 1",
        cells.reset_index(),
        [
            "update @t: mean over probe tokens of ‖F(x,θ_t) − F(x,θ₀)‖₂. F is an LN output (‖F‖ ≈ √d per token), so "
            "the update saturates near √(2d) once F no longer resembles F(x,θ₀): step 1 is where placements differ. "
            "top block grad: L2 norm of all gradients of block N at step 1 (DeepNet Fig. 3a, where Post-LN-init has "
            "the larger one)."
        ],
    )
