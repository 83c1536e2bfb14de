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


def save(fig, out_dir: Path, name: str, fmt: str) -> Path:
    """Write one figure by the output rule (results/outputs.py): a link or device planted under the
    figure's name is never written through or renamed over blindly."""
    path = out_dir / f"{name}.{fmt}"
    target = output_file(path, "--output")
    fig.tight_layout(rect=(0, 0, 0.8 if fig.legends else 1, 1))  # room on the right for a figure legend
    # bbox_inches="tight": never clip a long suptitle or the legend
    write_output(target, lambda f: fig.savefig(f, format=fmt, dpi=120, bbox_inches="tight"))
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
