"""Batch-statistics fluctuation against step (PowerNorm, Shen et al. 2020, Fig. 2): one row of panels per
norm with batch statistics (BatchNorm, PowerNorm), one panel per distance, one colour per layer and site
(median over seeds), the i.i.d. floor of the mean's distance dashed in the same colour."""

from __future__ import annotations

from normbench.analysis.plots import LEGEND_PT, register_plot, save, suptitle

PANELS = {
    "bn_mean_rel_dist": "‖μ_B − μ‖/‖μ‖ (dashed: i.i.d. floor)",
    "bn_var_rel_dist": "‖σ²_B − σ²‖/‖σ²‖",
    "pn_qm_rel_dist": "PowerNorm ‖Q_B − Q‖/‖Q‖",
}


@register_plot("stability")
def batch_statistics_fluctuation(frame, out_dir, *, machine, fmt):
    import matplotlib.pyplot as plt

    rows = frame[frame["metric"].isin([*PANELS, "bn_mean_rel_dist_iid"]) & frame["step"].notna()]
    if rows.empty:
        return []
    rows = rows.assign(
        where=rows["layer"].astype("Int64").astype(str) + "." + rows["site"].fillna("").astype(str)
    )
    curves = rows.groupby(["norm", "metric", "where", "step"])["value"].median()
    norms = list(dict.fromkeys(rows["norm"]))
    panels = [m for m in PANELS if m in set(rows["metric"])]
    fig, axes = plt.subplots(
        len(norms), len(panels), figsize=(5 * len(panels), 3.6 * len(norms)), squeeze=False
    )
    places = sorted(set(rows["where"]))
    colour = {w: plt.cm.viridis(i / max(1, len(places) - 1)) for i, w in enumerate(places)}
    for i, norm in enumerate(norms):
        for j, metric in enumerate(panels):
            ax = axes[i][j]
            for where in places:
                for m, style in ((metric, "-"), ("bn_mean_rel_dist_iid", "--")):
                    if style == "--" and metric != "bn_mean_rel_dist":
                        continue
                    key = (norm, m, where)
                    if key in curves.index.droplevel("step"):
                        c = curves.loc[key]
                        label = f"layer.site {where}" if style == "-" and i == 0 and j == 0 else None
                        ax.plot(c.index, c.to_numpy(), style, color=colour[where], lw=1, label=label)
            ax.set_yscale("log")
            ax.set_title(f"{norm}: {PANELS[metric]}", fontsize=9)
            ax.set_xlabel("step")
            ax.grid(True, which="both", alpha=0.3)
    if axes[0][0].get_legend_handles_labels()[0]:
        fig.legend(fontsize=LEGEND_PT, loc="center right")
    suptitle(fig, f"Batch statistics vs running statistics during training (median over seeds) — {machine}")
    return [save(fig, out_dir, "stability_batch_statistics", fmt)]
