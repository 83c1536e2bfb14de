"""Init figures: ‖x_l‖²/d of the residual stream per layer against Xiong et al.'s Lemma 2 band for Pre-LN
(drawn from the measured embedding s₀: [s₀ + l/2, s₀ + 3l/2]), and the per-layer FFN gradient profiles
(‖mean over batches of ∂L/∂W²_l‖, Xiong's definition) for each configuration and depth."""

from __future__ import annotations

from normbench.analysis.plots import LEGEND_PT, register_plot, save, suptitle


@register_plot("init")
def stream_growth_and_grad_profiles(frame, out_dir, *, machine, fmt):
    import matplotlib.pyplot as plt
    import numpy as np

    stream = frame[frame["metric"] == "stream_sq_norm"]
    grads = frame[(frame["metric"] == "ffn_grad_norm_of_mean") & (frame["site"] == "fc2")]
    if stream.empty and grads.empty:
        return []
    label = lambda r: f"{r['placement']}/{r['init']}"  # noqa: E731
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 5))
    configs = sorted({label(r) for _, r in frame.drop_duplicates("case_id").iterrows()})
    colour = {c: plt.cm.tab10(i % 10) for i, c in enumerate(configs)}
    _layer_curves(ax1, stream, label, colour, relative=False)
    pre = stream[stream["placement"] == "pre"]
    if not pre.empty:
        s0 = float(pre[pre["layer"] == 0]["value"].mean())
        layers = np.arange(0, pre["layer"].max() + 1)
        ax1.fill_between(
            layers,
            s0 + layers / 2,
            s0 + 3 * layers / 2,
            color="grey",
            alpha=0.2,
            label=f"Lemma 2 band from $s_0$ = {s0:.2f}",
        )
    ax1.set_xlabel("layer l")
    ax1.set_ylabel(r"$\Vert x_l \Vert^2 / d$ of the residual stream")
    ax1.set_title("Residual stream growth at init (Xiong Lemma 2)", fontsize=10)
    ax1.grid(True, alpha=0.3)
    ax1.legend(fontsize=LEGEND_PT, ncol=2)
    _layer_curves(ax2, grads, label, colour, relative=True)
    ax2.set_yscale("log")
    ax2.set_xlabel("relative depth l / L")
    ax2.set_ylabel(r"$\Vert$ mean over batches of $\partial L / \partial W^2_l \, \Vert_F$")
    ax2.set_title("FFN output-weight gradient per layer at init (Xiong Thm 1)", fontsize=10)
    ax2.grid(True, which="both", alpha=0.3)
    ax2.legend(fontsize=LEGEND_PT, ncol=2)
    suptitle(fig, f"At initialization — {machine}")
    return [save(fig, out_dir, "init_stream_and_gradients", fmt)]


def _layer_curves(ax, rows, label, colour, *, relative: bool) -> None:
    """One curve per configuration and depth: the mean value per layer (against l / L when relative), the
    deeper models drawn darker."""
    for (config, depth), g in rows.assign(config=rows.apply(label, axis=1)).groupby(["config", "depth"]):
        g = g.groupby("layer")["value"].mean()
        ax.plot(
            g.index / depth if relative else g.index,
            g.values,
            marker="o",
            ms=2,
            color=colour[config],
            alpha=0.4 + 0.6 * depth / rows["depth"].max(),
            label=f"{config} L={depth}",
        )
