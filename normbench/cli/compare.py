"""Compare two runs: ratio of medians per case, a Mann-Whitney U test on the raw samples, asv marks
(+ worse, - better, ~ not significant, ! status regressed, x not comparable). Exit 1 on a regression
with --fail-on-regression."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from normbench.cli._common import RESULTS_DIR, CompareFormat, cli_errors, err, out
from normbench.core.errors import NormbenchError

NAME = "compare"
PANEL = "Results"


@cli_errors
def command(
    base: Annotated[
        str, typer.Argument(help="Base run id, or several joined by commas.", show_default=False)
    ],
    new: Annotated[
        str, typer.Argument(help="New run id (or 'latest'), or several joined by commas.", show_default=False)
    ],
    factor: Annotated[float, typer.Option(help="Ratio of medians that counts as a change.", min=1.0)] = 1.1,
    alpha: Annotated[float, typer.Option(help="Significance level of the Mann-Whitney U test.")] = 0.002,
    only_changed: Annotated[bool, typer.Option("--only-changed", help="Hide unchanged cases.")] = False,
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="Exit 1 on a regression (+ or !).")
    ] = False,
    allow_env: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-env", help="Environment field allowed to differ (torch, cpu, ...); repeatable."
        ),
    ] = None,
    allow_load: Annotated[
        bool,
        typer.Option("--allow-load", help="Compare cases timed while the load exceeded the core count."),
    ] = False,
    fmt: Annotated[
        CompareFormat,
        typer.Option("--format", "-f", help="github | plain | md | csv | json (csv/json: numeric records)"),
    ] = "github",
    results: Annotated[Path, typer.Option("--results", "-r", help="Results directory.")] = RESULTS_DIR,
) -> None:
    from normbench.analysis.compare import (
        CompareOptions,
        compare_frames,
        comparison_records,
        comparison_table,
        summary_line,
    )
    from normbench.core.tables import Table, render, write_records
    from normbench.results.store import RunStore

    if fmt not in ("github", "plain", "md", "csv", "json"):
        raise NormbenchError(f"--format {fmt!r}: one of github, plain, md, csv, json")
    import pandas as pd

    base_runs = [RunStore.open(results, r) for r in base.split(",")]
    new_runs = [RunStore.open(results, r) for r in new.split(",")]
    sb, sn = base_runs[0], new_runs[0]
    opts = CompareOptions(factor=factor, alpha=alpha, allow_env=set(allow_env or []), allow_load=allow_load)
    rows, notes = compare_frames(
        pd.concat([s.read() for s in base_runs], ignore_index=True),
        pd.concat([s.read() for s in new_runs], ignore_index=True),
        sb.manifest.get("env", {}),
        sn.manifest.get("env", {}),
        opts,
    )
    title = f"{base} -> {new} (factor {factor}, alpha {alpha})"
    if fmt == "csv":  # the records alone on stdout; the summary and noise notes on stderr
        out.print(
            write_records(comparison_records(rows, only_changed=only_changed), fmt), markup=False, end=""
        )
        for line in [title, summary_line(rows), *notes]:
            err.print(line, markup=False)
    elif fmt == "json":
        records = comparison_records(rows, only_changed=only_changed)
        text = write_records(
            records,
            fmt,
            base=base.split(","),
            new=new.split(","),
            factor=factor,
            alpha=alpha,
            summary=summary_line(rows),
            notes=notes,
        )
        out.print(text, markup=False, end="")
    else:
        table = Table(title, comparison_table(rows, only_changed=only_changed), [summary_line(rows), *notes])
        out.print(render([table], fmt), markup=False, end="")
    if fail_on_regression and any(r.regression for r in rows):
        err.print(f"regression: {sum(r.regression for r in rows)} case(s) marked + or !", markup=False)
        raise typer.Exit(1)
