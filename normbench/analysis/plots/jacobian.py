"""Jacobian figure: measured σ_max(J) against Xiong's √d/‖x‖ and against the centred √d/‖x − mean‖, one
point per input, coloured by input distribution (and mean offset), one marker per norm, with y = x:
points above the line are inputs where the bound failed. Each panel carries its legend inside its axes."""

from __future__ import annotations

from normbench.analysis.plots import LEGEND_PT, register_plot, save, suptitle

MARKERS = {"layernorm": "o", "rmsnorm": "s", "batchnorm": "^", "dyt": "D"}


@register_plot("jacobian")
def sigma_vs_bound(frame, out_dir, *, machine, fmt):
    import matplotlib.pyplot as plt
    import numpy as np

    rows = frame[
        frame["metric"].isin(["sigma_max", "xiong_bound", "centred_bound"]) & frame["sample"].notna()
    ]
    if rows.empty:
        return []
    wide = rows.pivot_table(index=["case_id", "sample"], columns="metric", values="value", aggfunc="first")
    info = frame.drop_duplicates("case_id").set_index("case_id")
    wide = wide.join(info[["norm", "impl"] + [c for c in ("dist", "mean") if c in info]], on="case_id")
    wide["group"] = wide["dist"].astype(str) + np.where(
        wide["dist"] == "gaussian", " μ/σ=" + wide["mean"].astype(str), ""
    )
    groups = sorted(wide["group"].unique())
    colours = {
        g: plt.cm.tab10(i % 10) if len(groups) <= 10 else plt.cm.tab20(i % 20) for i, g in enumerate(groups)
    }
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.2))
    for ax, bound, title in (
        (axes[0], "xiong_bound", "Xiong et al.'s √d/‖x‖₂"),
        (axes[1], "centred_bound", "centred √d/‖x − mean‖₂"),
    ):
        data = wide[(wide[bound] > 0) & (wide["sigma_max"] > 0) & np.isfinite(wide[bound])]
        if bound == "centred_bound":  # constant rows: ‖x − mean‖ is 0 up to rounding, the bound is infinite
            dropped = int((data[bound] > 1e8).sum())
            data = data[data[bound] <= 1e8]
            if dropped:
                ax.text(
                    0.02,
                    0.98,
                    f"{dropped} constant-row inputs omitted (bound = ∞)",
                    transform=ax.transAxes,
                    va="top",
                    fontsize=LEGEND_PT,
                )
        for (group, norm), pts in data.groupby(["group", "norm"]):
            ax.scatter(
                pts[bound],
                pts["sigma_max"],
                s=12,
                alpha=0.7,
                color=colours[group],
                marker=MARKERS.get(norm, "x"),
                label=f"{norm}, {group}",
            )
        lo = min(data[bound].min(), data["sigma_max"].min())
        hi = max(data[bound].max(), data["sigma_max"].max())
        ax.plot([lo, hi], [lo, hi], "k--", lw=1, label="y = x (bound met with equality)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"bound: {title} (dimensionless: output per unit input)")
        ax.set_ylabel(r"measured $\sigma_{max}(J)$ (dimensionless)")
        ax.set_title(f"measured vs {title}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=LEGEND_PT, loc="best", framealpha=0.8)  # inside the axes, where the points are not
    suptitle(
        fig,
        f"Jacobian spectral norm vs bound, one point per input (above the line = bound fails) — {machine}",
    )
    return [save(fig, out_dir, "jacobian_sigma_vs_bound", fmt)]
