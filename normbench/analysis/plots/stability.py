"""Stability figures: training loss and the model update ‖F(x,θ_t) − F(x,θ₀)‖ per token against step, one
panel per depth, one colour per configuration (placement / init / warmup), seeds as thin lines; the unigram
loss (a model that learned nothing) as a dashed line."""

from __future__ import annotations

from normbench.analysis.plots import LEGEND_PT, register_plot, save, suptitle


def config_label(row) -> str:
    warm = f", warmup {int(row['warmup'])}" if row.get("warmup", 0) else ""
    return f"{row['placement']}/{row['init']}{warm}"


@register_plot("stability")
def loss_and_update_curves(frame, out_dir, *, machine, fmt):
    import matplotlib.pyplot as plt

    rows = frame[frame["metric"].isin(["loss", "model_update"])]
    if "lr" in rows and rows["lr"].nunique() > 1:  # the training runs; the phase diagram shows the other lrs
        rows = rows[rows["lr"] == rows.drop_duplicates("case_id")["lr"].mode().iloc[0]]
    if "steps" in rows:
        rows = rows[rows["steps"] > 1]  # one-step runs measure only the first update (their own figure)
    if rows.empty:
        return []
    rows = rows.assign(config=rows.apply(config_label, axis=1))
    configs = sorted(rows["config"].unique())
    colour = {c: plt.cm.tab10(i % 10) for i, c in enumerate(configs)}
    depths = sorted(rows["depth"].unique())
    unigram = frame[frame["metric"] == "unigram_loss"].groupby("depth")["value"].median()
    fig, axes = plt.subplots(2, len(depths), figsize=(4.8 * len(depths), 7.5), squeeze=False, sharey="row")
    for j, depth in enumerate(depths):
        for i, (metric, ylabel) in enumerate(
            (
                ("loss", "training loss (nats/byte)"),
                ("model_update", r"model update $\Vert F(x,\theta_t) - F(x,\theta_0) \Vert$ per token"),
            )
        ):
            ax = axes[i][j]
            sel = rows[(rows["metric"] == metric) & (rows["depth"] == depth)]
            for (config, _seed), run in sel.groupby(["config", "seed"]):
                run = run.sort_values("step")
                if metric == "model_update":
                    run = run[run["step"] > 0]
                first = _seed == sel[sel["config"] == config]["seed"].min()
                ax.plot(
                    run["step"],
                    run["value"],
                    color=colour[config],
                    lw=1,
                    alpha=0.8,
                    label=config if first else None,
                )
            if metric == "loss" and depth in unigram:
                ax.axhline(unigram[depth], color="k", ls="--", lw=1, label="unigram model (learned nothing)")
            if metric == "model_update":
                ax.set_xscale("log")
                ax.set_yscale("log")
            ax.set_title(f"L = {depth}", fontsize=10)
            ax.set_xlabel("step")
            ax.set_ylabel(ylabel if j == 0 else "")
            ax.grid(True, which="both", alpha=0.3)
    axes[0][-1].legend(fontsize=LEGEND_PT)
    suptitle(
        fig,
        f"Training stability: loss and model update per placement and depth (seeds as separate lines) — "
        f"{machine}",
    )
    return [save(fig, out_dir, "stability_loss_and_update", fmt)]


@register_plot("stability")
def stuck_phase_diagram(frame, out_dir, *, machine, fmt):
    """Post-LN (Xavier, no warmup): the fraction of seeds stuck in each depth × lr cell."""
    import matplotlib.pyplot as plt
    import numpy as np

    runs = frame.drop_duplicates("case_id")
    if "lr" not in runs or "judge" not in runs:
        return []
    runs = runs[
        (runs["placement"] == "post")
        & (runs["init"] == "xavier")
        & (runs["warmup"] == 0)
        & (runs["judge"].astype(bool))
    ]
    if runs["lr"].nunique() < 2 or runs["depth"].nunique() < 2:
        return []
    runs = runs.assign(stuck=runs["status"] == "stuck")
    stuck = runs.pivot_table(index="depth", columns="lr", values="stuck", aggfunc="sum")
    total = runs.pivot_table(index="depth", columns="lr", values="stuck", aggfunc="count")
    fig, ax = plt.subplots(figsize=(1.3 * len(stuck.columns) + 2.5, 0.6 * len(stuck.index) + 2))
    image = ax.imshow(
        (stuck / total).to_numpy(float), origin="lower", cmap="Reds", vmin=0, vmax=1, aspect="auto"
    )
    for i, j in np.ndindex(stuck.shape):
        if total.iat[i, j] == total.iat[i, j]:  # not NaN: the cell was run
            share = stuck.iat[i, j] / total.iat[i, j]
            ax.text(
                j,
                i,
                f"{int(stuck.iat[i, j])}/{int(total.iat[i, j])}",
                ha="center",
                va="center",
                fontsize=9,
                color="white" if share > 0.5 else "black",  # readable on the dark cells
            )
    ax.set_xticks(range(len(stuck.columns)), [f"{lr:g}" for lr in stuck.columns])
    ax.set_yticks(range(len(stuck.index)), [str(int(d)) for d in stuck.index])
    ax.set_xlabel("peak lr (Adam, no warmup)")
    ax.set_ylabel("depth L")
    fig.colorbar(image, ax=ax, label="fraction of seeds stuck")
    ax.set_title(f"Post-LN stuck at the unigram loss: depth × lr (seeds stuck/run)\n{machine}", fontsize=9)
    return [save(fig, out_dir, "stability_stuck_phase", fmt)]
