"""Gate timings on base vs head in one job: every latency and block case of SUITE (default quick) timed
impl@BASE against impl@head (the working tree) in paired, shuffled rounds in one process, in k fresh
processes; an A/A in the same rounds sets this job's noise threshold. Deterministic benches run once on
each side and compare by value. Exit codes: 0 pass, 1 regression, 3 inconclusive (125 with --bisect), 2 bad
input. --format md: a pull-request comment. See docs/ci.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from normbench.ab.comment import render_comment
from normbench.ab.gate import ABOptions, exit_code
from normbench.ab.report import render_json, render_text, verdict_line
from normbench.ab.run import run_ab
from normbench.ab.timing import STATS
from normbench.cli._common import RESULTS_DIR, CompareFormat, cli_errors, err, out, results_option
from normbench.core.errors import NormbenchError

NAME = "ab"
PANEL = "Results"


@cli_errors
def command(
    base: Annotated[str, typer.Argument(help="The commit, branch or tag to compare the working tree with.")],
    suite: Annotated[str, typer.Argument(help="Suite name or file.")] = "quick",
    processes: Annotated[
        int, typer.Option("--processes", "-k", min=1, help="Fresh processes (each times every case).")
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
    second_look: Annotated[
        bool,
        typer.Option(
            "--second-look/--no-second-look",
            help="Time the cases k processes left inconclusive in k more (once) before answering 3.",
        ),
    ] = True,
    bisect: Annotated[
        bool,
        typer.Option("--bisect", help="Exit 125 instead of 3 when inconclusive (git bisect run skips it)."),
    ] = False,
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
        typer.Option(
            "--markdown",
            help="Also write the markdown (a pull-request comment, as --format md) here.",
        ),
    ] = None,
    results: Annotated[Path, results_option()] = RESULTS_DIR,
) -> None:
    if stat not in STATS:
        raise NormbenchError(f"--stat {stat!r}: one of {', '.join(STATS)}")
    if not (factor > 1 and factor < float("inf")):
        raise NormbenchError(f"--factor {factor!r}: a number above 1")
    if fmt == "csv":
        raise NormbenchError("--format csv: ab writes github, plain, md or json")
    opts = ABOptions(factor, processes, stat, threads, base_python, second_look=second_look)
    result = run_ab(
        base,
        suite,
        opts,
        results=results,
        only=only,
        deterministic=deterministic,
        all_cases=all_cases,
        say=lambda s: err.print(s, markup=False),
    )
    out.print(_rendered(result, str(fmt), show_all), markup=False, end="")
    if markdown is not None:
        markdown.write_text(render_comment(result))
    if code := exit_code(result):
        err.print(verdict_line(result), markup=False)
        raise typer.Exit(BISECT_SKIP if bisect and code == 3 else code)


BISECT_SKIP = 125  # `git bisect run`: this commit cannot be tested; neither good nor bad


def _rendered(result, fmt: str, show_all: bool) -> str:
    if fmt == "json":
        return render_json(result)
    if fmt == "md":  # a pull-request comment
        return render_comment(result)
    return render_text(result, fmt, everything=show_all)
