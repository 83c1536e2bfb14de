"""Print tables from stored results (the Parquet parts, never memory), warnings first. Several run ids
combine shards. csv and json are data: one numeric record per case (and per input, tensor or layer)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from normbench.cli._common import RESULTS_DIR, cli_errors, err, out
from normbench.core.errors import NormbenchError

NAME = "report"
PANEL = "Results"


@cli_errors
def command(
    runs: Annotated[
        list[str] | None, typer.Argument(help="Run ids, or 'latest' (default).", show_default=False)
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="github | plain | latex | csv | json | md")
    ] = "github",
    baseline: Annotated[
        str | None, typer.Option(help="norm:impl for the speedup column (default: each bench's).")
    ] = None,
    results: Annotated[Path, typer.Option("--results", "-r", help="Results directory.")] = RESULTS_DIR,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    from normbench.analysis.report import build_tables
    from normbench.core.tables import FORMATS, MACHINE_FORMATS, render
    from normbench.results.store import read_runs

    if fmt not in FORMATS:
        raise NormbenchError(f"--format {fmt!r}: one of {', '.join(FORMATS)}")
    if output:
        from normbench.results.paths import check_output_file

        check_output_file(output, "--output")
    frame, manifests = read_runs(results, runs or ["latest"])
    if fmt in MACHINE_FORMATS:
        text = _records(frame, manifests, fmt, baseline)
    else:
        text = render(build_tables(frame, manifests, baseline=baseline), fmt)
    if fmt == "md":
        text = _markdown(text, frame, manifests, output, results)
    if output:
        output.write_text(text)
        out.print(f"wrote {output}", markup=False)
    else:
        out.print(text, markup=False, end="")


def _records(frame, manifests, fmt: str, baseline: str | None) -> str:
    """csv/json: one numeric record per case (analysis/records.py); warnings on stderr (csv) or beside
    the records (json), claims verdicts too (json)."""
    from normbench.analysis.records import case_records
    from normbench.analysis.report import check_baseline, claims_table, one_copy_per_case, report_warnings
    from normbench.core.tables import plain_records, write_records

    check_baseline(frame, baseline)
    warnings = report_warnings(frame, manifests)
    frame = one_copy_per_case(frame)
    from normbench.analysis.derived import with_derived

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
        claims=plain_records(claims.frame) if claims is not None else [],
    )


def _markdown(tables_text: str, frame, manifests, output: Path | None, results: Path) -> str:
    """One Markdown file for a paper appendix or a pull request: header, tables, claims, figures."""
    import os

    from normbench.analysis.plots import plot_run
    from normbench.analysis.report import markdown_header
    from normbench.results.env import machines_of

    plot_dir = (output.parent if output else results / manifests[-1]["run_id"]) / "plots"
    machine = machines_of(manifests)
    paths = plot_run(frame, plot_dir, machine=machine)
    base = output.parent if output else Path.cwd()
    figures = "".join(f"![{p.stem}]({os.path.relpath(p, base)})\n\n" for p in paths)
    return markdown_header(manifests) + tables_text + ("\n## Figures\n\n" + figures if figures else "")
