"""Print a summary and the tables of stored results (the Parquet parts, never memory). In a terminal the
tables are fitted to its width and the whole fits in about 80 lines (--full: every table with its notes).
Several run ids combine shards. csv and json are data: one numeric record per case."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from normbench.analysis.report_text import ReportRequest, report_text
from normbench.cli._common import (
    RESULTS_DIR,
    ReportFormat,
    cli_errors,
    complete_benches,
    complete_norms,
    emit,
    out,
    results_option,
    runs_argument,
    say,
    terminal_width,
)
from normbench.results.outputs import output_file, write_output_text

NAME = "report"
PANEL = "Results"


@cli_errors
def command(
    runs: Annotated[list[str] | None, runs_argument()] = None,
    fmt: Annotated[
        ReportFormat, typer.Option("--format", "-f", help="Table or record format.")
    ] = ReportFormat.github,
    full: Annotated[
        bool, typer.Option("--full", help="Every table with its notes, however wide (github, plain).")
    ] = False,
    bench: Annotated[
        list[str] | None,
        typer.Option(
            "--bench",
            help="Only this bench kind's summary and tables; repeatable.",
            autocompletion=complete_benches,
        ),
    ] = None,
    table: Annotated[
        list[str] | None,
        typer.Option(
            "--table",
            help="Only the tables whose title contains WORD (any case); repeatable.",
            autocompletion=_complete_tables,
        ),
    ] = None,
    columns: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated result columns to keep (substring or glob), e.g. 'rmsnorm*,fastest'."
        ),
    ] = None,
    speedup_vs: Annotated[
        str | None,
        typer.Option(
            "--speedup-vs",
            help="norm:impl for the speedup column (default: each bench's).",
            autocompletion=complete_norms,
        ),
    ] = None,
    # its former name, hidden, kept until 2027-06-01 (CHANGELOG): "baseline" also names compare's base run
    baseline: Annotated[str | None, typer.Option("--baseline", hidden=True)] = None,
    results: Annotated[Path, results_option()] = RESULTS_DIR,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
    ] = None,
    plots: Annotated[
        Path | None,
        typer.Option(
            "--plots",
            help="With --format md: draw the figures into this folder and link them (default: plots/ "
            "beside -o FILE; none when the report goes to stdout).",
            show_default=False,
        ),
    ] = None,
) -> None:
    target = output_file(output, "--output") if output else None  # before any work
    request = ReportRequest(
        str(fmt), full, bench or [], table or [], columns, speedup_vs or baseline, plots, terminal_width()
    )
    text = report_text(results, runs or ["latest"], request, target, say=say)
    if target is not None and target.path is not None:  # a file, not `-o -` (stdout)
        write_output_text(target, text)
        out.print(f"wrote {output}", markup=False)
    elif target is not None:
        write_output_text(target, text)  # -o -: stdout, as without -o
    else:
        emit(text)


def _complete_tables(incomplete: str) -> list[str]:
    from normbench.analysis.terminal import TABLE_WORDS

    return [w for w in TABLE_WORDS if w.startswith(incomplete.lower())]
