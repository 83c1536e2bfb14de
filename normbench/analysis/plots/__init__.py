"""Figures, one module per bench kind, registered with @register_plot(kind). Headless (Agg).
Each plot function takes the kind's rows and writes files into out_dir, returning their paths."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from normbench.analysis.runs import bench_rows
from normbench.benches import all_benches
from normbench.core.registry import Registry
from normbench.results.outputs import output_file, write_output


@dataclass(frozen=True)
class Plot:
    kind: str  # the bench kind whose rows it draws
    draw: Callable  # (rows, out_dir, *, machine, fmt) -> list of paths written


PLOTS: Registry[Plot] = Registry("plot", "normbench.analysis.plots")


def register_plot(kind: str):
    def add(fn):
        PLOTS.add(f"{fn.__module__}.{fn.__qualname__}", Plot(kind, fn))
        return fn

    return add


def plot_run(frame, out_dir: Path, *, machine: str, fmt: str = "png") -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    plots = PLOTS.all()
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []

    benches = all_benches()
    for kind in dict.fromkeys(frame["bench"]):
        for plot in (p for p in plots.values() if p.kind == kind):
            rows = bench_rows(frame, benches[kind])
            paths.extend(plot.draw(rows[rows["status"] != "failed"], out_dir, machine=machine, fmt=fmt))
    return paths


LEGEND_PT = 8  # the smallest text a figure prints (legends, annotations, tick labels of words)


def save(fig, out_dir: Path, name: str, fmt: str) -> Path:
    """Write the figure by the output rule (results/outputs.py: a link or device planted under the figure's
    name is never written through or renamed over blindly) and close it. A figure made with
    layout="constrained" is laid out already; any other gets tight_layout, with room for a figure legend."""
    path = out_dir / f"{name}.{fmt}"
    target = output_file(path, "--output")
    fig.set_label(path.name)  # the figure knows its file (savefig is handed an open file, not the name)
    for ax in fig.axes:
        readable_log_ticks(ax)
    if fig.get_layout_engine() is None:
        fig.tight_layout(rect=(0, 0, 0.8 if fig.legends else 1, 1))
    # bbox_inches="tight": never clip a long suptitle or the legend
    write_output(target, lambda f: fig.savefig(f, format=fmt, dpi=120, bbox_inches="tight"))
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def readable_log_ticks(ax) -> None:
    """A log axis's ticks as numbers ("20", "0.05", "1e-05"), not "2×10¹": matplotlib's default formatter
    is replaced where it is still the default (a figure's own, the latency ratio words, stays)."""
    from matplotlib.ticker import LogFormatter, LogFormatterSciNotation

    class Plain(LogFormatter):  # LogFormatter chooses which ticks get a label; the label is a plain number
        def _num_to_string(self, x, vmin, vmax):
            return f"{x:.3g}" if 1e-4 <= abs(x) < 1e5 else f"{x:.0e}"

    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() != "log" or type(axis.get_major_formatter()) is not LogFormatterSciNotation:
            continue
        base = getattr(axis.get_transform(), "base", 10)
        axis.set_major_formatter(Plain(base=base, labelOnlyBase=False))
        axis.set_minor_formatter(Plain(base=base, labelOnlyBase=False, minor_thresholds=(2, 0.5)))


def suptitle(fig, text: str, fontsize: float = 10) -> None:
    """The figure's title, wrapped to the figure's width (a machine's name makes it long)."""
    import textwrap

    chars = int(fig.get_figwidth() * 72 / (0.55 * fontsize))  # an average character is ~0.55 em wide
    fig.suptitle("\n".join(textwrap.wrap(text, max(20, chars))), fontsize=fontsize)
