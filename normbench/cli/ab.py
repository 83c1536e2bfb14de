"""Gate timings on base vs head in one job: every latency and block case of SUITE (default quick) timed
impl@BASE against impl@head (the working tree) in paired, shuffled rounds in one process, in k fresh
processes; an A/A in the same rounds sets this job's noise threshold. Deterministic benches run once on
each side and compare by value. Exit codes: 0 pass, 1 regression, 3 inconclusive, 2 bad input. See
docs/ci.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from normbench.ab.gate import ABOptions, exit_code
from normbench.ab.guard import StopNow
from normbench.ab.report import render_json, render_text, verdict_line
from normbench.ab.run import run_ab
from normbench.ab.timing import STATS
from normbench.cli._common import RESULTS_DIR, CompareFormat, cli_errors, err, out, results_option
from normbench.core.errors import NormbenchError

NAME = "ab"
PANEL = "Results"
MAX_PROCESSES = 100  # each process imports torch and times every case: more is a typo, not a plan


@cli_errors
def command(
    base: Annotated[str, typer.Argument(help="The commit, branch or tag to compare the working tree with.")],
    suite: Annotated[str, typer.Argument(help="Suite name or file.")] = "quick",
    processes: Annotated[
        int,
        typer.Option(
            "--processes", "-k", min=1, max=MAX_PROCESSES, help="Fresh processes (each times every case)."
        ),
    ] = 5,
    factor: Annotated[
        float,
        typer.Option(help="The change that counts; a case is + beyond it times the case's A/A spread."),
    ] = 1.1,
    stat: Annotated[
        str, typer.Option(help="Per-process statistic: paired (median of per-round ratios), min or p20.")
    ] = "paired",
    threads: Annotated[
        int | None, typer.Option(min=1, help="torch CPU threads (default: the suite's, else torch's).")
    ] = None,
    base_python: Annotated[
        str | None,
        typer.Option(
            "--base-python",
            help="Another interpreter (a venv with another torch) as the base: alternating processes, ABBA.",
        ),
    ] = None,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="Only cases whose label matches (glob or substring).")
    ] = None,
    deterministic: Annotated[
        bool,
        typer.Option(
            "--deterministic/--no-deterministic",
            help="Also run and compare the suite's deterministic benches.",
        ),
    ] = True,
    show_all: Annotated[bool, typer.Option("--all", help="List unchanged cases too.")] = False,
    all_cases: Annotated[
        bool,
        typer.Option(
            "--all-cases", help="Also time the cases whose norms' code is the same at base and head."
        ),
    ] = False,
    fmt: Annotated[
        CompareFormat, typer.Option("--format", "-f", help="github | plain | md | json")
    ] = "github",
    markdown: Annotated[
        Path | None,
        typer.Option("--markdown", help="Also write the markdown report here (for $GITHUB_STEP_SUMMARY)."),
    ] = None,
    results: Annotated[Path, results_option()] = RESULTS_DIR,
) -> None:
    if stat not in STATS:
        raise NormbenchError(f"--stat {stat!r}: one of {', '.join(STATS)}")
    if not (factor > 1 and factor < float("inf")):
        raise NormbenchError(f"--factor {factor!r}: a number above 1")
    if fmt == "csv":
        raise NormbenchError("--format csv: ab writes github, plain, md or json")
    opts = ABOptions(factor=factor, processes=processes, stat=stat, threads=threads, base_python=base_python)
    try:
        result = run_ab(
            base,
            suite,
            opts,
            results=results,
            only=only,
            deterministic=deterministic,
            all_cases=all_cases,
            say=lambda s: err.print(s, markup=False),
            show=_show(str(fmt), show_all),
            markdown=markdown,
            everything=show_all,
        )
    except StopNow as stop:
        err.print(f"ab stopped by {stop.signal.name}: nothing stored", markup=False)
        raise typer.Exit(128 + int(stop.signal)) from None
    if code := exit_code(result):
        raise typer.Exit(code)


def _show(fmt: str, everything: bool):
    """What prints the result (before it is stored: a store that fails loses no verdict)."""

    def show(result) -> None:
        out.print(
            render_json(result) if fmt == "json" else render_text(result, fmt, everything=everything),
            markup=False,
            end="",
        )
        if exit_code(result):
            err.print(verdict_line(result), markup=False)

    return show
