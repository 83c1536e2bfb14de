"""Print a summary and the tables of stored results (the Parquet parts, never memory). In a terminal the
tables are fitted to its width and the whole fits in about 80 lines (--full: every table with its notes).
Several run ids combine shards. csv and json are data: one numeric record per case."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from normbench.analysis.derived import with_derived
from normbench.analysis.plots import plot_run
from normbench.cli._common import (
    RESULTS_DIR,
    ReportFormat,
    cli_errors,
    complete_runs,
    emit,
    err,
    out,
    results_option,
    terminal_width,
)
from normbench.results.env import machines_of
from normbench.results.outputs import output_file, write_output_text
from normbench.results.store import read_runs

NAME = "report"
PANEL = "Results"


@cli_errors
def command(
    runs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Run ids, or 'latest' (default).", show_default=False, autocompletion=complete_runs
        ),
    ] = None,
    fmt: Annotated[
        ReportFormat, typer.Option("--format", "-f", help="Table or record format.")
    ] = ReportFormat.github,
    full: Annotated[
        bool, typer.Option("--full", help="Every table with its notes, however wide (github, plain).")
    ] = False,
    bench: Annotated[
        list[str] | None,
        typer.Option("--bench", help="Only this bench kind's summary and tables; repeatable."),
    ] = None,
    table: Annotated[
        list[str] | None,
        typer.Option("--table", help="Only the tables whose title contains WORD (any case); repeatable."),
    ] = None,
    columns: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated result columns to keep (substring or glob), e.g. 'rmsnorm*,fastest'."
        ),
    ] = None,
    baseline: Annotated[
        str | None, typer.Option(help="norm:impl for the speedup column (default: each bench's).")
    ] = None,
    results: Annotated[Path, results_option()] = RESULTS_DIR,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    from normbench.analysis.report import build_tables, check_baseline
    from normbench.analysis.summary import build_summary
    from normbench.analysis.terminal import Selection
    from normbench.core.tables import MACHINE_FORMATS, render

    fmt = str(fmt)
    target = output_file(output, "--output") if output else None  # before any work
    frame, manifests = read_runs(results, runs or ["latest"])
    check_baseline(frame, baseline)
    summary = build_summary(frame, manifests, baseline=baseline)
    if bench:
        summary = [s for s in summary if s.section in (*bench, "run", "warning", "not ok")]
    choice = Selection(bench or [], table or [], [c for c in (columns or "").split(",") if c])
    if fmt in MACHINE_FORMATS:
        text = _records(frame, manifests, fmt, baseline, summary)
    elif fmt in ("github", "plain") and not full:
        from normbench.analysis.summary import summary_text
        from normbench.analysis.terminal import terminal_report

        width = terminal_width()
        tables = build_tables(frame, manifests, baseline=baseline, warnings=False)
        text = terminal_report(tables, summary_text(summary, width), fmt, width, choice)
    else:
        from normbench.analysis.terminal import choose_tables

        tables = build_tables(frame, manifests, baseline=baseline)
        text = render(
            choose_tables(tables, choice) if choice.any else tables, fmt
        )  # --full keeps every column
        if fmt != "latex" and not choice.tables:  # --table: the tables asked for, nothing else
            text = _summary_block(summary, fmt) + text
    if fmt == "md":
        text = _markdown(text, frame, manifests, output, results)
    if target is not None and target.path is not None:
        write_output_text(target, text)
        out.print(f"wrote {output}", markup=False)
    elif target is not None:
        write_output_text(target, text)  # -o -: stdout, as without -o
    else:
        emit(text)


def _summary_block(summary, fmt: str) -> str:
    """The summary above the full tables: a list in md/github, plain lines otherwise."""
    from normbench.analysis.summary import summary_text

    if fmt in ("md", "github"):
        return "## Summary\n\n" + "".join(f"- **{s.section}**: {s.text}\n" for s in summary) + "\n"
    return "Summary\n" + "\n".join(summary_text(summary, 10**6)) + "\n\n"


def _records(frame, manifests, fmt: str, baseline: str | None, summary) -> str:
    """csv/json: one numeric record per case (analysis/records.py); warnings on stderr (csv) or beside
    the records (json), claims verdicts and the summary lines too (json)."""
    from normbench.analysis.records import case_records
    from normbench.analysis.report import check_baseline, claims_table, one_copy_per_case, report_warnings
    from normbench.analysis.summary import summary_records
    from normbench.core.tables import plain_records, write_records

    check_baseline(frame, baseline)
    warnings = report_warnings(frame, manifests)
    frame = one_copy_per_case(frame)

    records = with_derived(case_records(frame, baseline), frame)
    if fmt == "csv":
        for w in warnings:
            err.print(f"warning: {w}", markup=False)
        return write_records(records, fmt)
    claims = claims_table(frame, manifests)
    return write_records(
        records,
        fmt,
        runs=[m["run_id"] for m in manifests],
        warnings=warnings,
        summary=summary_records(summary),
        claims=plain_records(claims.frame) if claims is not None else [],
    )


def _markdown(tables_text: str, frame, manifests, output: Path | None, results: Path) -> str:
    """One Markdown file for a paper appendix or a pull request: header, tables, claims, figures."""
    import os

    from normbench.analysis.report import markdown_header

    to_file = output is not None and str(output) != "-"
    plot_dir = (output.parent if to_file else results / manifests[-1]["run_id"]) / "plots"
    machine = machines_of(manifests)
    paths = plot_run(frame, plot_dir, machine=machine)
    base = output.parent if to_file else Path.cwd()
    figures = "".join(f"![{p.stem}]({os.path.relpath(p, base)})\n\n" for p in paths)
    return markdown_header(manifests) + tables_text + ("\n## Figures\n\n" + figures if figures else "")
