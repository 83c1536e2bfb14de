"""Run a suite and store its results under results/<run_id>/; the run id is the last line on stdout
(`RUN=$(normbench run quick --quiet)`). Exit 0 when every case is ok, 1 when some failed, 2 for a bad suite
or option, 130 when interrupted (finish with --resume RUN_ID)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from normbench.cli._bench_flags import META_KEY, BenchFlagsCommand
from normbench.cli._common import (
    RESULTS_DIR,
    Only,
    Threads,
    choices,
    cli_errors,
    complete_benches,
    complete_norms,
    complete_suites,
    complete_unfinished_runs,
    err,
    out,
    parse_shard,
    results_option,
)
from normbench.cli._progress import RunProgress
from normbench.cli._summary import print_summary
from normbench.core.errors import printable
from normbench.executors.service import RunOptions, run

NAME = "run"
PANEL = "Run"
COMMAND_CLASS = BenchFlagsCommand


@cli_errors
def command(
    ctx: typer.Context,
    suite: Annotated[
        str | None,
        typer.Argument(
            help="Suite TOML file, or the name of a shipped suite (quick, paper, ...); not needed with --resume.",
            show_default=False,
            autocompletion=complete_suites,
        ),
    ] = None,
    bench: Annotated[
        str | None,
        typer.Option(
            help="Run without a suite file: this bench kind, with its parameters as flags, e.g. --bench latency "
            "--norms layernorm,rmsnorm:composite --tokens 4096 --d 1024 --dtype bf16 (a,b = a sweep; "
            "`normbench list benches` names them).",
            show_default=False,
            autocompletion=complete_benches,
        ),
    ] = None,
    norms: Annotated[
        str | None,
        typer.Option(
            help="With --bench: norms or norm:impl, comma-separated.",
            show_default=False,
            autocompletion=complete_norms,
        ),
    ] = None,
    results: Annotated[Path, results_option()] = RESULTS_DIR,
    resume: Annotated[
        str | None,
        typer.Option(
            help="Finish RUN_ID (or 'latest'): run only its cases without a stored result.",
            autocompletion=complete_unfinished_runs,
        ),
    ] = None,
    run_id: Annotated[
        str | None,
        typer.Option(
            "--run-id", help="Name the new run NAME (a folder name) instead of <time>-<suite>-<random>."
        ),
    ] = None,
    tag: Annotated[
        str | None,
        typer.Option(help="Add TAG to the new run's id (<time>-<suite>-TAG-<random>) and manifest."),
    ] = None,
    shard: Annotated[
        str | None, typer.Option(help="i/N: run the i-th of N deterministic slices (SLURM arrays, ...).")
    ] = None,
    only: Only = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the expanded cases and stop.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output (for CI).")] = False,
    threads: Threads = None,
    processes: Annotated[
        str | None,
        typer.Option(
            help="Fresh processes each CPU latency/block case is timed in, its rounds split among them; its "
            "interval is over processes (default: the suite's `processes`, else 4; 1 = one process).",
            show_default=False,
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            help="local: one case after another here; ray: cases spread over a Ray cluster.",
            autocompletion=choices("local", "ray"),
        ),
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(help="With --executor ray: join this cluster (auto, ray://host:port); else start one."),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            help="With --executor ray: CPUs of the local Ray (default: all cores), or tasks in flight on a cluster.",
            min=1,
        ),
    ] = None,
    pages: Annotated[
        str | None,
        typer.Option(
            help="CPU page state of the timing process: huge (2 MiB transparent huge pages, the default where "
            "the kernel allows them) or base (4 KiB); default: NORMBENCH_PAGES, else the resumed run's, else the "
            "suite's `pages`.",
            show_default=False,
            autocompletion=choices("huge", "base"),
        ),
    ] = None,
    allow_override: Annotated[
        bool,
        typer.Option(
            "--allow-override",
            help="Let a plugin replace a built-in norm, bench kind or claim of the same name (recorded in "
            "the run's manifest).",
        ),
    ] = False,
) -> None:
    options = RunOptions.of(ctx.params, shard=parse_shard(shard), bench_flags=ctx.meta.get(META_KEY, []))
    result = run(suite, options, progress=_progress(quiet), say=_say)
    if dry_run:
        _print_cases(result.plan.cases)
    elif result.stopped is not None:  # before the first case (Ray's start-up): no run folder was made
        resumed = result.plan.resumed
        _say(f"{result.stopped}" + (f"; run {resumed.run_id} is unchanged" if resumed else ""))
        raise typer.Exit(128 + int(result.stopped.signal))
    else:
        if bench is not None and not quiet:  # an ad-hoc run answers at once: its report's summary
            print_summary(results, result.store.run_id)
        _finish(result.store, result.outcome, result.remaining, results)


def _progress(quiet: bool):
    return lambda todo, finished, history: RunProgress(todo, quiet=quiet, finished=finished, history=history)


def _say(text: str) -> None:
    err.print(printable(text), markup=False)


def _finish(store, outcome, remaining: int, results: Path) -> None:
    counts = ", ".join(f"{n} {s}" for s, n in sorted(outcome.statuses.items()))
    ran = f"{counts} in this session" if counts else "nothing run in this session"
    _say(f"run {store.run_id}: {ran}; stored in {store.path}")
    for label, reason in outcome.failures:
        _say(f"  failed: {label}: {reason}")
    resume = f"`normbench run --resume {store.run_id}" + (
        f" --results {results}`" if Path(results) != RESULTS_DIR else "`"
    )
    if outcome.write_error is not None:
        exc = outcome.write_error
        stored = len(store.finished_case_ids())
        _say(
            f"error: cannot write {exc.filename or store.parts}: {exc.strerror or exc}; "
            f"{stored} cases stored; {resume} finishes"
        )
    elif remaining:
        _say(f"{remaining} cases left: {resume} finishes them")
    typer.echo(store.run_id)  # the only line on stdout: what a script captures
    raise typer.Exit(outcome.exit_code)


def _print_cases(cases) -> None:
    for c in cases:
        out.print(printable(f"{c.case_id}  {c.label}"), markup=False)
    out.print(f"{len(cases)} cases", markup=False)
