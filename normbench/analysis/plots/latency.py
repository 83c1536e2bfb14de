"""Latency figures. The speedup chart: per shape, one dot per norm:impl at its speedup over the baseline
(log scale, 1 = as fast as the baseline), the copy probe as a black bar (the speedup a norm would have if
it moved its bytes as fast as a copy), the baseline's time in µs in the shape's label and the fastest
implementation's beside its dot; one panel per mode x dtype, one figure per device, cache state, input and
statistic. And GB/s against hidden size, one line per norm:impl, the copy probe dashed."""

from __future__ import annotations

import itertools

from normbench.analysis.plots import register_plot, save

FIGURE_KEYS = ["device", "tokens", "cache", "input", "stat"]  # one figure per combination


def _wide(frame):
    ok = frame[frame["status"] == "ok"]
    defaults = {"cache": "warm", "input": "normal", "stat": "median"}  # runs from before these parameters
    ok = ok.assign(**{k: ok[k].fillna(v) if k in ok else v for k, v in defaults.items()})
    metrics = [
        "time_median",
        "time_min",
        "time_p20",
        "time_p80",
        "gbps",
        "copy_time_median",
        "copy_time_min",
        "copy_gbps",
    ]
    wide = (
        ok[ok["metric"].isin(metrics)]
        .pivot_table(
            index=FIGURE_KEYS + ["dtype", "mode", "d", "norm", "impl"],
            columns="metric",
            values="value",
            aggfunc="first",
        )
        .reset_index()
    )
    return wide


STYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v", "x"]


def _style(wide, norm, impl):
    """One colour per norm, one line style and marker per implementation: 16 lines stay readable."""
    import matplotlib.pyplot as plt

    norms = sorted(set(wide["norm"]) - {"identity"})
    impls = sorted(set(wide.loc[wide["norm"] == norm, "impl"]))
    k = impls.index(impl)
    return plt.cm.tab10(norms.index(norm) % 10), STYLES[k % len(STYLES)], MARKERS[k % len(MARKERS)]


@register_plot("latency")
def latency_vs_hidden(frame, out_dir, *, machine, fmt):
    import matplotlib.pyplot as plt

    wide = _wide(frame)
    paths = []
    if wide.empty:
        return paths
    for (device, tokens, cache, input_, stat), fig_rows in wide.groupby(FIGURE_KEYS):
        if fig_rows["d"].nunique() < 2:
            continue  # a line needs two hidden sizes
        modes, dtypes = sorted(fig_rows["mode"].unique()), sorted(fig_rows["dtype"].unique())
        for metric, ylabel, copy_metric, stem in (
            ("gbps", f"GB/s (byte model, {stat} time)", "copy_gbps", "bandwidth"),
        ):
            fig, axes = plt.subplots(
                len(modes),
                len(dtypes),
                figsize=(5 * len(dtypes), 3.6 * len(modes)),
                squeeze=False,
                sharex=True,
            )
            for (i, mode), (j, dtype) in itertools.product(enumerate(modes), enumerate(dtypes)):
                ax = axes[i][j]
                rows = fig_rows[(fig_rows["mode"] == mode) & (fig_rows["dtype"] == dtype)]
                for (norm, impl), line in rows[rows["norm"] != "identity"].groupby(["norm", "impl"]):
                    line = line.sort_values("d")
                    colour, style, marker = _style(wide, norm, impl)
                    ax.plot(
                        line["d"],
                        line[metric],
                        color=colour,
                        ls=style,
                        marker=marker,
                        ms=3,
                        label=f"{norm}:{impl}",
                    )
                    if metric == "time_median" and "time_p20" in line:  # p20-p80 band around the median
                        ax.fill_between(line["d"], line["time_p20"], line["time_p80"], alpha=0.15)
                if copy_metric in rows and rows[copy_metric].notna().any():
                    # each case times its own copy probe; the line is their median per hidden size
                    probe = rows.groupby("d")[copy_metric].median()
                    ax.plot(probe.index, probe.values, "k--", lw=1.5, label="copy probe (median over cases)")
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_title(f"{mode}, {dtype}", fontsize=9)
                ax.grid(True, which="both", alpha=0.3)
                ax.set_ylabel(ylabel if j == 0 else "")
                ax.set_xlabel("hidden size" if i == len(modes) - 1 else "")
            handles, labels = axes[0][0].get_legend_handles_labels()
            fig.legend(handles, labels, fontsize=7, loc="center right")
            fig.subplots_adjust(right=0.8)
            fig.suptitle(
                f"{stem.capitalize()} vs hidden, tokens={tokens}, {device}, {cache} cache, {input_} input "
                f"— {machine}",
                fontsize=10,
            )
            paths.append(save(fig, out_dir, f"{stem}_{device}_tokens{tokens}_{cache}_{input_}", fmt))
    return paths


BASELINES = ("layernorm:module", "rmsnorm:module")


@register_plot("latency")
def speedup_per_shape(frame, out_dir, *, machine, fmt):
    import matplotlib.pyplot as plt

    from normbench.core.tables import format_seconds

    wide = _wide(frame)
    if wide.empty:
        return []
    wide = wide.assign(label=wide["norm"] + ":" + wide["impl"])
    paths = []
    for (device, cache, input_, stat), fig_rows in wide.groupby(["device", "cache", "input", "stat"]):
        present = set(fig_rows["label"])
        baseline = next((b for b in BASELINES if b in present), None)
        if baseline is None:
            continue
        modes, dtypes = sorted(fig_rows["mode"].unique()), sorted(fig_rows["dtype"].unique())
        shapes = fig_rows[["tokens", "d"]].drop_duplicates().sort_values(["tokens", "d"])
        fig, axes = plt.subplots(
            len(modes),
            len(dtypes),
            figsize=(5.5 * len(dtypes), 0.5 * len(shapes) * len(modes) + 1.6 * len(modes)),
            squeeze=False,
        )
        time = f"time_{stat}"
        for (i, mode), (j, dtype) in itertools.product(enumerate(modes), enumerate(dtypes)):
            ax = axes[i][j]
            rows = fig_rows[(fig_rows["mode"] == mode) & (fig_rows["dtype"] == dtype)]
            ticks, names = [], []
            for y, (tokens, hidden) in enumerate(shapes.itertuples(index=False)):
                shape = rows[(rows["tokens"] == tokens) & (rows["d"] == hidden)].set_index("label")
                if baseline not in shape.index:
                    continue
                base = shape.at[baseline, time]
                ticks.append(y)
                names.append(f"{tokens}×{hidden}\n{baseline.split(':')[0]} {format_seconds(base)}")
                norms = shape[shape["norm"] != "identity"]
                for label, r in norms.iterrows():
                    colour, _, marker = _style(wide, r["norm"], r["impl"])
                    ax.scatter(base / r[time], y, color=colour, marker=marker, s=28, label=label, zorder=3)
                if not norms.empty:
                    best = norms[time].idxmin()
                    ax.annotate(
                        f"{best} {format_seconds(norms.at[best, time])}",
                        (base / norms.at[best, time], y),
                        xytext=(6, 4),
                        textcoords="offset points",
                        fontsize=6,
                    )
                copy = shape[f"copy_{time}"].dropna() if f"copy_{time}" in shape else []
                if len(copy):
                    ax.scatter(
                        base / copy.median(), y, color="k", marker="|", s=200, label="copy probe", zorder=2
                    )
            ax.axvline(1.0, color="grey", lw=1, ls="--")
            ax.set_ylim(-0.6, len(shapes) - 0.4)
            ax.set_xscale("log")
            ax.set_yticks(ticks, names, fontsize=7)
            ax.set_title(f"{mode}, {dtype}", fontsize=9)
            ax.grid(True, axis="x", which="both", alpha=0.3)
            ax.set_xlabel(
                f"speedup over {baseline} ({stat} time; > 1 = faster)" if i == len(modes) - 1 else ""
            )
        handles, labels = axes[0][0].get_legend_handles_labels()
        unique = dict(zip(labels, handles, strict=True))
        fig.legend(unique.values(), unique.keys(), fontsize=7, loc="center right")
        fig.suptitle(
            f"Speedup over {baseline} per shape, {device}, {cache} cache, {input_} input — {machine}",
            fontsize=10,
        )
        paths.append(save(fig, out_dir, f"speedup_{device}_{cache}_{input_}_{stat}", fmt))
    return paths
