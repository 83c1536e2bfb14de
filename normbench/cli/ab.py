"""Gate timings on base vs head in one job: every latency and block case of SUITE (default quick) timed
impl@BASE against impl@head (the working tree) in paired, shuffled rounds in one process, in k fresh
processes; an A/A in the same rounds sets this job's noise threshold. Deterministic benches run once on
each side and compare by value. Exit codes: 0 pass, 1 regression, 3 inconclusive (125 with --bisect), 2 bad
input. --format md: a pull-request comment. See docs/ci.md."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from normbench.ab.options import DEFAULT_PROCESSES, FORMATS, ABOptions
from normbench.ab.service import gate
from normbench.cli._common import (
    RESULTS_DIR,
    Markdown,
    Only,
    Threads,
    cli_errors,
    complete_git_refs,
    emit,
    err,
    results_option,
)
from normbench.core.verdicts import DEFAULT_FACTOR
from normbench.suite.validate import MAX_PROCESSES

ABFormat = StrEnum("ABFormat", {f: f for f in FORMATS})  # ab/options.py's list: its tables or one JSON object

NAME = "ab"
PANEL = "Results"


@cli_errors
def command(
    base: Annotated[
        str,
        typer.Argument(
            help="The commit, branch or tag to compare the working tree with.",
            autocompletion=complete_git_refs,
        ),
    ],
    suite: Annotated[str, typer.Argument(help="Suite name or file.")] = "quick",
    processes: Annotated[
        int,
        typer.Option(
            "--processes", "-k", min=1, max=MAX_PROCESSES, help="Fresh processes (each times every case)."
        ),
    ] = DEFAULT_PROCESSES,
    factor: Annotated[
        float,
        typer.Option(help="The change that counts; a case is + beyond it times the case's A/A spread."),
    ] = DEFAULT_FACTOR,
    threads: Threads = None,
    base_python: Annotated[
        str | None,
        typer.Option(
            "--base-python",
            help="Another interpreter (a venv with another torch) as the base: alternating processes, ABBA.",
        ),
    ] = None,
    only: Only = None,
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
        ABFormat,
        typer.Option(
            "--format", "-f", help="Tables (github, plain), a pull-request comment (md) or one JSON object."
        ),
    ] = "github",
    markdown: Markdown = None,
    results: Annotated[Path, results_option()] = RESULTS_DIR,
) -> None:
    opts = ABOptions(
        factor=factor,
        processes=processes,
        threads=threads,
        base_python=base_python,
        second_look=second_look,
        only=only,
        deterministic=deterministic,
        all_cases=all_cases,
        results=results,
        fmt=str(fmt),
        everything=show_all,
        bisect=bisect,
        markdown=markdown,
    )
    answer = gate(base, suite, opts, _say)
    emit(answer.text)
    for line in answer.notes:
        _say(line)
    if answer.error is not None:
        raise answer.error
    if answer.exit_code:
        raise typer.Exit(answer.exit_code)


def _say(line: str) -> None:
    err.print(line, markup=False)
