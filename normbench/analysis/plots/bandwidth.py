"""GB/s against the width d (the byte model's bytes over the case's time), one series per norm:impl
and the copy probe (the median of the cases' own probes) in black: lines through three or more widths; points
side by side where there are only two (a line through two points suggests a trend the run did not measure).
One panel per mode × dtype, one figure per device, statistic, token count and setting."""

from __future__ import annotations

import math
import re

from normbench.analysis.plots import LEGEND_PT, register_plot, save, suptitle
from normbench.analysis.plots.latency import FIGURE_KEYS, PANEL_KEYS, latency_cases, shape_name, style

DODGE = 0.07  # how far apart the implementations' points sit at one width (in category units)


@register_plot("latency")
def bandwidth_vs_d(frame, out_dir, *, machine, fmt):
    import matplotlib.pyplot as plt

    cases, settings = latency_cases(frame)
    if cases.empty or "gbps" not in cases:
        return []
    every = sorted(set(cases["label"]))
    paths = []
    for key, fig_rows in cases.groupby([*FIGURE_KEYS, "tokens", *settings]):
        widths = sorted(fig_rows["d"].unique())
        if len(widths) < 2:
            continue  # one width: the speedup chart shows it
        named = dict(zip([*FIGURE_KEYS, "tokens", *settings], key, strict=True))
        panels = list(fig_rows.groupby(PANEL_KEYS))
        cols = min(2, len(panels))
        rows = math.ceil(len(panels) / cols)
        fig, axes = plt.subplots(
            rows, cols, figsize=(5.2 * cols + 2.2, 3.6 * rows + 0.8), squeeze=False, layout="constrained"
        )
        handles = {}
        for ax, (panel, g) in zip(axes.flat, panels, strict=False):
            handles |= _panel(ax, g, widths, every)
            ax.set_title(" ".join(map(str, panel)), fontsize=9)
            ax.set_ylabel(f"GB/s (byte model, {named['stat']} time)", fontsize=LEGEND_PT)
        for ax in list(axes.flat)[len(panels) :]:
            ax.axis("off")
        order = sorted(handles, key=lambda k: (k == "copy probe", k))
        fig.legend([handles[k] for k in order], order, loc="outside right upper", fontsize=LEGEND_PT)
        shape = shape_name({**named, "d": "d"}, settings).replace("×d", " tokens")
        suptitle(fig, f"Bandwidth against the width d, {shape}, {named['device']} — {machine}")
        stem = re.sub(r"[^A-Za-z0-9_.+-]+", "-", "_".join(str(v) for v in key))  # a file name
        paths.append(save(fig, out_dir, f"bandwidth_{stem}", fmt))
    return paths


def _panel(ax, g, widths: list, every: list[str]) -> dict:
    """One mode × dtype: a series per implementation (points when there are two widths)."""
    points = len(widths) == 2
    where = {d: i for i, d in enumerate(widths)} if points else {d: d for d in widths}
    labels = sorted(set(g["label"]) - {"identity:copy"})
    handles = {}
    for k, label in enumerate(labels):
        series = g[g["label"] == label].sort_values("d")
        colour, line, marker = style(every, label)
        shift = (k - (len(labels) - 1) / 2) * DODGE if points else 0.0
        x = [where[d] + shift for d in series["d"]]
        handles[label] = ax.plot(
            x, series["gbps"], color=colour, ls="none" if points else line, marker=marker, ms=5
        )[0]
    copy = g.groupby("d")["copy_gbps"].median() if "copy_gbps" in g else None
    if copy is not None and copy.notna().any():
        x = [where[d] for d in copy.index]
        handles["copy probe"] = ax.plot(
            x, copy.to_numpy(), color="k", ls="none" if points else "--", marker="_", ms=18, mew=2
        )[0]
    ax.set_yscale("log")
    if points:
        ax.set_xticks(range(len(widths)), [f"d={d}" for d in widths], fontsize=LEGEND_PT)
        ax.set_xlim(-0.5, len(widths) - 0.5)
    else:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("width d", fontsize=LEGEND_PT)
    ax.grid(True, which="both", alpha=0.3)
    return handles
