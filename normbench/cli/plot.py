"""Draw a run's figures (headless matplotlib): latency and GB/s vs the width d, Jacobian norms vs the
bound, loss and model-update curves, per-layer profiles at init."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from normbench.analysis.plots import plot_run
from normbench.cli._common import RESULTS_DIR, PlotFormat, cli_errors, out, results_option, runs_argument
from normbench.results.env import machines_of
from normbench.results.paths import check_output_dir
from normbench.results.store import read_runs

NAME = "plot"
PANEL = "Results"


@cli_errors
def command(
    runs: Annotated[list[str] | None, runs_argument()] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option("--output", "-o", "--out", help="Output directory (default: results/<run>/plots)."),
    ] = None,
    fmt: Annotated[PlotFormat, typer.Option("--format", "-f", help="Figure file format.")] = PlotFormat.png,
    results: Annotated[Path, results_option()] = RESULTS_DIR,
) -> None:
    if out_dir is not None:
        check_output_dir(out_dir, "--out")
    frame, manifests = read_runs(results, runs or ["latest"])
    # the run's own folder (its manifest's run_id is checked equal to the folder name when opened)
    target = out_dir or results / manifests[-1]["run_id"] / "plots"
    machine = machines_of(manifests)
    paths = plot_run(frame, target, machine=machine, fmt=str(fmt))
    if not paths:
        out.print("no figures: the run has no rows a plot knows how to draw", markup=False)
    for path in paths:
        out.print(str(path), markup=False)
