"""Latency figures. The speedup chart: per shape, one dot per norm:impl at its time ratio to the run's
reference (the stored paired ratio `time_vs_ref`, with its 95% interval as a bar; a ratio of medians for
runs from before paired rounds), on a log axis whose ticks are words ("2× faster", "same", "3× slower");
the copy probe as a black tick (how fast a norm would be if it moved its bytes as fast as a copy); the
reference's time in the shape's label and the fastest's beside its dot. One panel per mode × dtype, every
setting of a shape (cold cache, a hard input) a row of its panel, one figure per device and statistic; the
panels share one ratio axis (a distance is the same ratio in each), and each implementation keeps its own
small offset within a row among its norm's (dodged: two at the same ratio do not hide each other)."""

from __future__ import annotations

import math

from normbench.analysis.plots import LEGEND_PT, register_plot, save, suptitle
from normbench.benches import get_bench
from normbench.norms import SPEEDUP_REFERENCES

FIGURE_KEYS = ["device", "stat"]
PANEL_KEYS = ["mode", "dtype"]
SHAPE_KEYS = ["tokens", "d"]
DEFAULTS = {"cache": "warm", "input": "normal", "stat": "median", "device": "cpu"}  # older runs lack them
STYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v", "x"]


def latency_cases(frame):
    """One row per ok latency case: its keys, `label` (norm:impl), `time` (its statistic), `speedup`
    (the reference's time over its own) with `lo`/`hi` (its 95% interval; NaN when unpaired), `copy_x`
    (the speedup of a copy) and `reference`; and the setting keys that tell its shapes apart."""
    import pandas as pd

    ok = frame[(frame["status"] == "ok") & frame["metric"].notna()]
    if ok.empty or "time_median" not in set(ok["metric"]):
        return pd.DataFrame(), []
    ok = ok.assign(**{k: ok[k].fillna(v) if k in ok else v for k, v in DEFAULTS.items()})
    scalar = ok[ok["sample"].isna() & (ok["tensor"].isna() if "tensor" in ok else True)]
    wide = scalar.pivot_table(index="case_id", columns="metric", values="value", aggfunc="first")
    bench = get_bench("latency")
    params = [k for k in bench.params if k in ok.columns and k not in bench.labels]  # reference: a label too
    settings = [
        k
        for k in params
        if k not in (*FIGURE_KEYS, *PANEL_KEYS, *SHAPE_KEYS) and ok[k].dropna().astype(str).nunique() > 1
    ]
    keys = [*FIGURE_KEYS, *PANEL_KEYS, *SHAPE_KEYS, *settings]
    meta = ok.drop_duplicates("case_id").set_index("case_id")[[*keys, "norm", "impl"]]
    if "reference" in ok:  # what the case's time_vs_ref row is a ratio to
        ref_rows = ok[ok["metric"] == "time_vs_ref_median"].drop_duplicates("case_id")
        meta = meta.join(ref_rows.set_index("case_id")["reference"])
    wide = wide.drop(columns=[c for c in wide.columns if c in meta.columns])  # a metric named like a key
    cases = meta.join(wide).reset_index()
    cases["label"] = cases["norm"] + ":" + cases["impl"]
    cases["time"] = [r.get(f"time_{r['stat']}", r["time_median"]) for r in cases.to_dict("records")]
    cases = cases[pd.to_numeric(cases["time"]).notna()]
    return _with_speedups(cases, keys), settings


def _with_speedups(cases, keys):
    """speedup, lo, hi and copy_x: from the paired ratio where stored, else against a baseline's time;
    base_time: the reference's own time at the same keys (estimated from the ratio where it did not run)."""
    import pandas as pd

    nan = math.nan
    paired = "time_vs_ref_median" in cases and cases["time_vs_ref_median"].notna().any()
    if paired:
        ref = cases.loc[cases["time_vs_ref_median"].notna(), "reference"].mode().iloc[0]
        mine = cases["label"] == ref  # the reference against itself: 1, exactly
        for column, value in (("time_vs_ref_median", 1.0), ("time_vs_ref_lo", 1.0), ("time_vs_ref_hi", 1.0)):
            if column in cases:
                cases.loc[mine, column] = value
        ratio = cases["time_vs_ref_median"]
        cases = cases.assign(
            reference=ref,
            speedup=1 / ratio,
            lo=1 / cases.get("time_vs_ref_hi", nan),
            hi=1 / cases.get("time_vs_ref_lo", nan),
            base_time=cases["time"] / ratio,
        )
        own = cases[mine].set_index(keys)["time"]  # the reference's own time where it ran at those keys
        measured = [own.get(tuple(r[k] for k in keys), math.nan) for r in cases.to_dict("records")]
        cases["base_time"] = pd.Series(measured, index=cases.index).fillna(cases["base_time"])
        copy_time = cases.get("copy_time_median", nan)  # a run without time_vs_copy: its copy probe's time
        paired_copy = cases["speedup"] * cases.get("time_vs_copy_median", nan)
        cases["copy_x"] = paired_copy.fillna(cases["base_time"] / copy_time)
        return cases[cases["speedup"].notna()]
    ref = next((b for b in SPEEDUP_REFERENCES if b in set(cases["label"])), None)
    if ref is None:
        return cases.iloc[:0]
    base = cases[cases["label"] == ref].set_index([k for k in keys])["time"]
    base_time = [base.get(tuple(r[k] for k in keys), nan) for r in cases.to_dict("records")]
    copy = cases.get("copy_time_median", nan)
    return cases.assign(reference=ref, base_time=base_time, lo=nan, hi=nan).assign(
        speedup=lambda c: c["base_time"] / c["time"], copy_x=lambda c: c["base_time"] / copy
    )


def shape_name(row: dict, settings: list[str]) -> str:
    """ "512×1024", then each setting that is not its default: "256×512 cold", "256×512 lowvar"."""
    params = get_bench("latency").params
    words = [f"{row['tokens']}×{row['d']}"]
    for k in settings:
        if str(row[k]) != str(params[k].default):
            words.append(str(row[k]) if k in ("cache", "input") else f"{k}={row[k]}")
    return " ".join(words)


def style(labels: list[str], label: str):
    """One colour per norm, one line style and marker per implementation: 16 lines stay readable."""
    import matplotlib.pyplot as plt

    norms = sorted({x.split(":")[0] for x in labels} - {"identity"})
    norm = label.split(":")[0]
    impls = sorted({x.split(":")[1] for x in labels if x.split(":")[0] == norm})
    k = impls.index(label.split(":")[1])
    colour = plt.cm.tab10(norms.index(norm) % 10) if norm in norms else "k"
    return colour, STYLES[k % len(STYLES)], MARKERS[k % len(MARKERS)]


def ratio_words(x: float, _pos=None) -> str:
    """A speedup as words: 2 -> "2× faster", 1 -> "same", 0.5 -> "2× slower"."""
    if not x or x <= 0:
        return ""
    if abs(x - 1) < 1e-9:
        return "same"
    factor = x if x > 1 else 1 / x
    return f"{factor:.3g}× {'faster' if x > 1 else 'slower'}"


def ratio_ticks(lo: float, hi: float, most: int = 5) -> list[float]:
    """Round factors both ways of 1 inside [lo, hi], at most `most` of them: 1, 2, 5, 10 ... or every
    decade (or every other) when the range is wide."""
    for mantissas, every in (
        ((1, 1.25, 1.5, 2), 1),
        ((1, 2, 5), 1),
        ((1, 3), 1),
        ((1,), 1),
        ((1,), 2),
        ((1,), 3),
    ):
        factors = {m * 10**e for e in range(0, 7) if e % every == 0 for m in mantissas}
        ticks = sorted({t for f in factors for t in (f, 1 / f) if lo <= t <= hi})
        if 2 <= len(ticks) <= most:
            return ticks
    return [t for t in (1.0,) if lo <= t <= hi]


@register_plot("latency")
def speedup_per_shape(frame, out_dir, *, machine, fmt):
    import matplotlib.pyplot as plt

    from normbench.core.tables import format_seconds

    cases, settings = latency_cases(frame)
    if cases.empty:
        return []
    paths = []
    every = sorted(set(cases["label"]))
    for (device, stat), fig_rows in cases.groupby(FIGURE_KEYS):
        ref = fig_rows["reference"].iloc[0]
        panels = [k for k, _ in fig_rows.groupby(PANEL_KEYS)]
        cols = min(2, len(panels))
        rows_per_panel = max(
            g.groupby(SHAPE_KEYS + settings).ngroups for _, g in fig_rows.groupby(PANEL_KEYS)
        )
        height = 0.6 * rows_per_panel + 1.2
        fig, axes = plt.subplots(
            math.ceil(len(panels) / cols),
            cols,
            figsize=(6.4 * cols, height * math.ceil(len(panels) / cols) + 1.6),
            squeeze=False,
            layout="constrained",
        )
        handles = {}
        limits = _ratio_limits(fig_rows)
        for ax, (panel, g) in zip(axes.flat, fig_rows.groupby(PANEL_KEYS), strict=False):
            handles |= _panel(ax, g, settings, every, ref, format_seconds, limits)
            ax.set_title(" ".join(map(str, panel)), fontsize=9)
        for ax in list(axes.flat)[len(panels) :]:
            ax.axis("off")
        order = sorted(handles, key=lambda k: (k == "copy probe", k))
        fig.legend(
            [handles[k] for k in order],
            order,
            loc="outside lower center",
            ncol=min(5, len(handles)),
            fontsize=LEGEND_PT,
        )
        how = (
            f"the time ratio of its {stat} time in paired rounds, with its 95% interval"
            if fig_rows["lo"].notna().any()
            else f"its {stat} time over the reference's (timed apart: no interval)"
        )
        suptitle(fig, f"Each implementation against {ref}, per shape: {how} — {device}, {machine}")
        paths.append(save(fig, out_dir, f"speedup_{device}_{stat}", fmt))
    return paths


def _ratio_limits(rows) -> tuple[float, float]:
    """The ratio axis of every panel of a figure: every dot, interval end and copy tick, and 1, with room
    beside the outermost."""
    norms = rows[rows["norm"] != "identity"]
    xs = [*norms["speedup"], *norms["lo"], *norms["hi"], *rows["copy_x"]]
    xs = [x for x in xs if x == x and x > 0] or [1.0]
    return min(min(xs), 1.0) / 1.6, max(max(xs), 1.0) * 1.6


def dodge(labels: list[str], label: str, room: float = 0.6) -> float:
    """An implementation's vertical offset within a shape's row, among its norm's implementations (the
    norms differ in colour already): the same in every row, spread over at most `room` of the row."""
    norm = label.split(":")[0]
    mine = sorted(x for x in labels if x.split(":")[0] == norm)
    if label not in mine or len(mine) < 2 or norm == "identity":
        return 0.0
    step = min(0.12, room / (len(mine) - 1))
    return (mine.index(label) - (len(mine) - 1) / 2) * step


def _panel(ax, g, settings, every, ref, format_seconds, limits) -> dict:
    """One mode × dtype: a row per shape, a dot per implementation (dodged); the fastest named beside its
    dot; the ratio axis the figure's (`limits`)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    handles = {}
    shapes = sorted(g.groupby(SHAPE_KEYS + settings), key=lambda kv: kv[0])
    names, fastest = [], []
    for y, (_, shape) in enumerate(shapes):
        first = shape.iloc[0].to_dict()
        names.append(f"{shape_name(first, settings)}\nref {format_seconds(shape['base_time'].median())}")
        norms = shape[shape["norm"] != "identity"]
        for r in norms.to_dict("records"):
            colour, _, marker = style(every, r["label"])
            err = None
            if r["lo"] == r["lo"] and r["hi"] == r["hi"]:
                err = [[r["speedup"] - r["lo"]], [r["hi"] - r["speedup"]]]
            handles[r["label"]] = ax.errorbar(
                r["speedup"],
                y + dodge(every, r["label"]),
                xerr=err,
                color=colour,
                marker=marker,
                ms=5,
                ls="none",
                capsize=2,
                zorder=3,
            )
        copy = shape["copy_x"].dropna()
        if len(copy):
            handles["copy probe"] = ax.scatter(copy.median(), y, color="k", marker="|", s=200, zorder=2)
        if not norms.empty:
            best = norms.loc[norms["time"].idxmin()]
            fastest.append((best, y + dodge(every, best["label"])))
    lo, hi = limits
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    for best, y in fastest:
        _name_the_fastest(ax, best, y, (lo, hi), format_seconds)
    ax.xaxis.set_major_locator(FixedLocator(ratio_ticks(lo, hi)))
    ax.xaxis.set_major_formatter(FuncFormatter(ratio_words))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.tick_params(axis="x", labelsize=LEGEND_PT)
    ax.axvline(1.0, color="grey", lw=1, ls="--")
    ax.set_ylim(-0.6, len(shapes) - 0.4)
    ax.set_yticks(range(len(shapes)), names, fontsize=LEGEND_PT)
    ax.grid(True, axis="x", alpha=0.3)
    return handles


def _name_the_fastest(ax, best, y, limits, format_seconds) -> None:
    """The fastest's name and time just above its dot, on the side that keeps the text in the axes."""
    lo, hi = (math.log(v) for v in limits)
    where = (math.log(best["speedup"]) - lo) / (hi - lo)
    ha, dx = ("left", -4) if where < 0.3 else ("right", 4) if where > 0.7 else ("center", 0)
    ax.annotate(
        f"{best['label']} {format_seconds(best['time'])}",
        (best["speedup"], y),
        xytext=(dx, 7),
        textcoords="offset points",
        fontsize=LEGEND_PT,
        ha=ha,
        va="bottom",
    )
