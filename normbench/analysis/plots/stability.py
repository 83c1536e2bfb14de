"""Stability figures: training loss and the model update ‖F(x,θ_t) − F(x,θ₀)‖ per token against step, one
panel per depth, one colour per configuration (placement / init / warmup), seeds as thin lines; the unigram
loss (a model that learned nothing) as a dashed line."""

from __future__ import annotations

from normbench.analysis.plots import register_plot, save


def config_label(row) -> str:
    warm = f", warmup {int(row['warmup'])}" if row.get("warmup", 0) else ""
    return f"{row['placement']}/{row['init']}{warm}"


@register_plot("stability")
def loss_and_update_curves(frame, out_dir, *, machine, fmt):
    import matplotlib.pyplot as plt

    rows = frame[frame["metric"].isin(["loss", "model_update"])]
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
                ("model_update", "model update ‖F(x,θ_t) − F(x,θ₀)‖ per token"),
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
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(
        f"Training stability: loss and model update per placement and depth (seeds as separate lines) — "
        f"{machine}",
        fontsize=10,
    )
    return [save(fig, out_dir, "stability_loss_and_update", fmt)]
