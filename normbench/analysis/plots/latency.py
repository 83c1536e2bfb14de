"""Latency figures: median time and GB/s against hidden size, one line per norm:impl, the copy probe
(measured in the same run) as a dashed black line; one panel per mode x dtype, one figure per token count."""

from __future__ import annotations

import itertools

from normbench.analysis.plots import register_plot, save


def _wide(frame):
    ok = frame[frame["status"] == "ok"]
    metrics = ["time_median", "time_p20", "time_p80", "gbps", "copy_time_median", "copy_gbps"]
    wide = ok[ok["metric"].isin(metrics)].pivot_table(
        index=["device", "dtype", "mode", "tokens", "hidden", "norm", "impl"], columns="metric", values="value",
        aggfunc="first").reset_index()
    return wide


@register_plot("latency")
def latency_vs_hidden(frame, out_dir, *, machine, fmt):
    import matplotlib.pyplot as plt

    wide = _wide(frame)
    paths = []
    if wide.empty:
        return paths
    for (device, tokens), fig_rows in wide.groupby(["device", "tokens"]):
        modes, dtypes = sorted(fig_rows["mode"].unique()), sorted(fig_rows["dtype"].unique())
        for metric, ylabel, copy_metric, stem in (
            ("time_median", "median time per call (s)", "copy_time_median", "latency"),
            ("gbps", "GB/s (byte model)", "copy_gbps", "bandwidth"),
        ):
            fig, axes = plt.subplots(len(modes), len(dtypes), figsize=(5 * len(dtypes), 3.6 * len(modes)),
                                     squeeze=False, sharex=True)
            for (i, mode), (j, dtype) in itertools.product(enumerate(modes), enumerate(dtypes)):
                ax = axes[i][j]
                rows = fig_rows[(fig_rows["mode"] == mode) & (fig_rows["dtype"] == dtype)]
                for (norm, impl), line in rows[rows["norm"] != "identity"].groupby(["norm", "impl"]):
                    line = line.sort_values("hidden")
                    ax.plot(line["hidden"], line[metric], marker="o", ms=3, label=f"{norm}:{impl}")
                    if metric == "time_median" and "time_p20" in line:
                        ax.fill_between(line["hidden"], line["time_p20"], line["time_p80"], alpha=0.15)
                probe = rows.drop_duplicates("hidden").sort_values("hidden")
                if copy_metric in probe and probe[copy_metric].notna().any():
                    ax.plot(probe["hidden"], probe[copy_metric], "k--", lw=1.5, label="copy probe (same run)")
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_title(f"{mode}, {dtype}", fontsize=9)
                ax.grid(True, which="both", alpha=0.3)
                ax.set_ylabel(ylabel if j == 0 else "")
                ax.set_xlabel("hidden size" if i == len(modes) - 1 else "")
            axes[0][-1].legend(fontsize=7, loc="best")
            fig.suptitle(f"{stem.capitalize()} vs hidden, tokens={tokens}, {device} — {machine}", fontsize=10)
            paths.append(save(fig, out_dir, f"{stem}_{device}_tokens{tokens}", fmt))
    return paths
