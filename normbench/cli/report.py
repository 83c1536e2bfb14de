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
    complete_benches,
    complete_norms,
    complete_runs,
    emit,
    err,
    out,
    results_option,
    terminal_width,
)
from normbench.core.errors import NormbenchError
from normbench.results.env import machines_of
from normbench.results.outputs import output_file, write_output_text
from normbench.results.paths import check_output_dir
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
        typer.Option(
            "--bench",
            help="Only this bench kind's summary and tables; repeatable.",
            autocompletion=complete_benches,
        ),
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
        str | None,
        typer.Option(
            help="norm:impl for the speedup column (default: each bench's).", autocompletion=complete_norms
        ),
    ] = None,
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
    from normbench.analysis.report import build_tables, check_baseline, report_options
    from normbench.analysis.summary import build_summary, summary_text
    from normbench.analysis.terminal import Selection
    from normbench.core.tables import MACHINE_FORMATS, render

    fmt = str(fmt)
    target = output_file(output, "--output") if output else None  # before any work
    to_file = target is not None and target.path is not None  # not `-o -` (stdout)
    if plots is not None and fmt != "md":
        raise NormbenchError("--plots: figures are linked only from a Markdown report (--format md)")
    beside = to_file and target.how != "in_place" and fmt == "md"  # a file, not a device or pipe
    plot_dir = plots or (output.parent / "plots" if beside else None)
    if plot_dir is not None:
        check_output_dir(plot_dir, "--plots")
    frame, manifests = read_runs(results, runs or ["latest"])
    check_baseline(frame, baseline)
    opts = report_options(manifests, baseline)  # one per report: the summary and the tables share it
    summary = build_summary(frame, manifests, baseline=baseline, opts=opts)
    if bench:
        summary = [s for s in summary if s.section in (*bench, "run", "warning", "not ok")]
    choice = Selection(bench or [], table or [], [c for c in (columns or "").split(",") if c])
    width = terminal_width()
    if fmt in MACHINE_FORMATS:
        text = _records(frame, manifests, fmt, baseline, summary, opts)
    elif fmt in ("github", "plain") and not full:
        from normbench.analysis.terminal import terminal_report

        tables = build_tables(frame, manifests, baseline=baseline, warnings=False, opts=opts)
        text = terminal_report(tables, summary_text(summary, width), fmt, width, choice)
    else:
        from normbench.analysis.terminal import choose_tables

        tables = build_tables(frame, manifests, baseline=baseline, opts=opts)
        chosen = choose_tables(tables, choice) if choice.any else tables
        text = render(chosen, fmt, width)  # --full keeps every column; the notes wrap at the width
        if fmt != "latex" and not choice.tables:  # --table: the tables asked for, nothing else
            text = _summary_block(summary_text(summary, width, whole=True), fmt) + text
    if fmt == "md":
        text = _markdown(text, frame, manifests, output if to_file else None, plot_dir, width)
    text = without_local_paths(text)
    if to_file:
        write_output_text(target, text)
        out.print(f"wrote {output}", markup=False)
    elif target is not None:
        write_output_text(target, text)  # -o -: stdout, as without -o
    else:
        emit(text)


def _summary_block(lines: list[str], fmt: str) -> str:
    """The summary above the full tables, as the terminal shows it (md: in a text block, aligned)."""
    if fmt == "md":
        return "## Summary\n\n```text\n" + "\n".join(lines) + "\n```\n\n"
    return "Summary\n" + "\n".join(lines) + "\n\n"


def _records(frame, manifests, fmt: str, baseline: str | None, summary, opts) -> str:
    """csv/json: one numeric record per case (analysis/records.py); warnings on stderr (csv) or beside
    the records (json), claims verdicts and the summary lines too (json); what the summary derived
    already (opts) is not derived again."""
    from normbench.analysis.records import case_records
    from normbench.analysis.report import claims_table, one_copy_per_case, report_warnings
    from normbench.analysis.summary import summary_records
    from normbench.core.tables import plain_records, write_records

    warnings = opts.once("warnings", lambda: report_warnings(frame, manifests))
    frame = opts.once("one copy per case", lambda: one_copy_per_case(frame))

    records = with_derived(case_records(frame, baseline), frame)
    if fmt == "csv":
        for w in warnings:
            err.print(f"warning: {w}", markup=False)
        return write_records(records, fmt)
    claims = opts.once("claims", lambda: claims_table(frame, manifests))
    return write_records(
        records,
        fmt,
        runs=[m["run_id"] for m in manifests],
        warnings=warnings,
        summary=summary_records(summary),
        claims=plain_records(claims.frame) if claims is not None else [],
    )


def _markdown(
    tables_text: str, frame, manifests, output: Path | None, plot_dir: Path | None, width: int
) -> str:
    """One Markdown file for a paper appendix or a pull request: header, tables, claims, and the figures
    when there is a folder for them (--plots, or plots/ beside -o FILE), linked relative to the file."""
    import os
    import textwrap

    from normbench.analysis.report import markdown_header

    figures = ""
    if plot_dir is not None:
        paths = plot_run(frame, plot_dir, machine=machines_of(manifests))
        base = output.parent if output else Path.cwd()
        figures = "".join(f"![{p.stem}]({Path(os.path.relpath(p, base)).as_posix()})\n\n" for p in paths)
    header = "\n".join(
        "\n".join(textwrap.wrap(line, width, subsequent_indent="  ", break_on_hyphens=False)) or line
        for line in markdown_header(manifests).split("\n")
    )
    return header + tables_text + ("\n## Figures\n\n" + figures if figures else "")


def without_local_paths(text: str) -> str:
    """The report as it may be shared: this machine's working folder and home folder left out of every
    path in it (a case's reason can quote a file)."""
    import os

    here = str(Path.cwd())
    home = os.path.expanduser("~")
    if len(here) > 1:
        text = text.replace(here + os.sep, "")
    if len(home) > 1:
        text = text.replace(home + os.sep, "~" + os.sep)
    return text
