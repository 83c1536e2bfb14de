"""Compare two runs (BASE NEW), or a run with this machine's baseline of its suite (--baseline [NEW]). Timing:
the paired ratios (time_vs_ref, time_vs_copy: a time over one taken in the same rounds), whatever the load,
on one CPU model; absolute times only with --absolute, on the same machine and unloaded; each by its ratio
of medians, a Mann-Whitney U test and the run-to-run noise. Deterministic metrics (Jacobian errors, losses,
init statistics): by value, within a cross-machine tolerance. Marks: + worse, - better, ~ not significant,
= unchanged, ! status regressed, x not comparable. Exit: 0 every case compared, no regression; 1 a
regression (+ or !); 2 bad input; 3 inconclusive (a case x, the noise floor above --factor, or a change
beyond --factor no test can judge at its sample size); --allow-incomparable turns 3 into 0. See docs/ci.md."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from normbench.analysis.compare.options import FORMATS, CompareOptions, CompareRunsOptions
from normbench.cli._common import (
    RESULTS_DIR,
    Markdown,
    cli_errors,
    complete_runs,
    emit,
    err,
    results_option,
)
from normbench.core.verdicts import DEFAULT_FACTOR
from normbench.results.outputs import output_file, write_output_text

CompareFormat = StrEnum("CompareFormat", {f: f for f in FORMATS})  # analysis/compare/options.py's list

NAME = "compare"
PANEL = "Results"


@cli_errors
def command(
    base: Annotated[
        str | None,
        typer.Argument(
            help="Base run id, or several joined by commas (with --baseline: the new run).",
            show_default=False,
            autocompletion=complete_runs,
        ),
    ] = None,
    new: Annotated[
        str | None,
        typer.Argument(
            help="New run id (or 'latest'), or several joined by commas.",
            show_default=False,
            autocompletion=complete_runs,
        ),
    ] = None,
    baseline: Annotated[
        bool,
        typer.Option(
            "--baseline",
            help="Compare the new run (default: latest) with the saved baseline of its suite on its machine.",
        ),
    ] = False,
    baselines: Annotated[
        Path | None,
        typer.Option("--baselines", help="Baselines folder (default $NORMBENCH_BASELINES or ./baselines)."),
    ] = None,
    any_machine: Annotated[
        bool,
        typer.Option(
            "--any-machine",
            help="With --baseline: when this machine has none, use the suite's newest baseline from another "
            "machine (its timings are then x; deterministic metrics compare).",
        ),
    ] = False,
    factor: Annotated[
        float, typer.Option(help="Ratio of medians that counts as a change (a finite number > 1).")
    ] = DEFAULT_FACTOR,
    alpha: Annotated[
        float, typer.Option(help="Significance level of the Mann-Whitney U test (between 0 and 1).")
    ] = 0.002,
    only_changed: Annotated[bool, typer.Option("--only-changed", help="Hide unchanged cases.")] = False,
    allow_incomparable: Annotated[
        bool,
        typer.Option(
            "--allow-incomparable", help="Exit 0 instead of 3 when some case could not be compared."
        ),
    ] = False,
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            "--fail-on-regression",
            help="Kept for old pipelines: compare always exits 1 on a regression (and 3 when inconclusive).",
        ),
    ] = False,
    allow_env: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-env",
            help="Environment field allowed to differ (torch, cpu, cpu_flags, ...); repeatable.",
        ),
    ] = None,
    allow_load: Annotated[
        bool,
        typer.Option("--allow-load", help="Compare cases timed while the load exceeded the core count."),
    ] = False,
    absolute: Annotated[
        bool,
        typer.Option(
            "--absolute",
            help="Also gate absolute times (seconds; same machine, unloaded), beside the paired ratios.",
        ),
    ] = False,
    deterministic_only: Annotated[
        bool,
        typer.Option(
            "--deterministic-only",
            help="Gate only what holds across CI jobs: deterministic metrics and statuses, no timing.",
        ),
    ] = False,
    fmt: Annotated[
        CompareFormat,
        typer.Option("--format", "-f", help="github | plain | md | csv | json (csv/json: numeric records)"),
    ] = "github",
    markdown: Markdown = None,
    results: Annotated[Path, results_option()] = RESULTS_DIR,
) -> None:
    from normbench.analysis.compare.runs import compare_runs

    md_out = output_file(markdown, "--markdown") if markdown is not None else None  # before any work

    gate = CompareOptions(
        factor=factor,
        alpha=alpha,
        allow_env=set(allow_env or []),
        allow_load=allow_load,
        absolute=absolute,
        deterministic_only=deterministic_only,
    )
    opts = CompareRunsOptions(
        results=results,
        fmt=str(fmt),
        gate=gate,
        only_changed=only_changed,
        allow_incomparable=allow_incomparable,
        baseline=baseline,
        baselines=baselines,
        any_machine=any_machine,
    )
    answer = compare_runs(base, new, opts, _say)
    emit(answer.text)
    if md_out is not None:
        write_output_text(md_out, answer.markdown)
    for line in answer.notes:
        _say(line)
    if answer.exit_code:
        raise typer.Exit(answer.exit_code)


def _say(line: str) -> None:
    err.print(line, markup=False)
