"""Compare two runs (BASE NEW), or a run with this machine's baseline of its suite (--baseline [NEW]). Timing:
the paired ratios (time_vs_ref, time_vs_copy: a time over one taken in the same rounds), whatever the load,
on one CPU model; absolute times only with --absolute, on the same machine and unloaded; each by its ratio
of medians, a Mann-Whitney U test and the run-to-run noise. Deterministic metrics (Jacobian errors, losses,
init statistics): by value, within a cross-machine tolerance. Marks: + worse, - better, ~ not significant,
= unchanged, ! status regressed, x not comparable. Exit: 0 every case compared, no regression; 1 a
regression (+ or !); 2 bad input; 3 inconclusive (a case x, the noise floor above --factor, or a change
beyond --factor no test can judge at its sample size); --allow-incomparable turns 3 into 0. See docs/ci.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from normbench.cli._common import (
    RESULTS_DIR,
    CompareFormat,
    cli_errors,
    complete_runs,
    emit,
    err,
    results_option,
)
from normbench.core.errors import NormbenchError
from normbench.results import baselines as saved
from normbench.results.store import RunStore

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
    ] = 1.1,
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
    fmt: Annotated[
        CompareFormat,
        typer.Option("--format", "-f", help="github | plain | md | csv | json (csv/json: numeric records)"),
    ] = "github",
    results: Annotated[Path, results_option()] = RESULTS_DIR,
) -> None:
    from normbench.analysis.compare.frames import CompareOptions, compare_frames
    from normbench.analysis.compare.verdict import (
        comparison_records,
        comparison_table,
        counts,
        exit_code,
        not_compared,
        regressions,
        summary_line,
        verdict_line,
    )
    from normbench.core.tables import Table, render, write_records

    if fmt not in ("github", "plain", "md", "csv", "json"):
        raise NormbenchError(f"--format {fmt!r}: one of github, plain, md, csv, json")
    import pandas as pd

    # every number checked before any run is read: nan, 0 or a negative alpha would switch the gate off
    opts = CompareOptions(
        factor=factor, alpha=alpha, allow_env=set(allow_env or []), allow_load=allow_load, absolute=absolute
    )
    base_runs, new_runs, base_name = _open_runs(base, new, baseline, baselines, results, any_machine)
    new_name = ",".join(s.run_id for s in new_runs)
    base_frame = pd.concat([s.read() for s in base_runs], ignore_index=True)
    new_frame = pd.concat([s.read() for s in new_runs], ignore_index=True)
    _check_distinct(base_runs, new_runs)  # after reading: an old run's refusal says how to upgrade it
    _check_something_in_common(base_frame, new_frame, base_runs[0], new_runs[0])
    result = compare_frames(
        base_frame,
        new_frame,
        _compared_env(base_runs[0]),
        _compared_env(new_runs[0]),
        opts,
    )
    rows = result.rows
    verdict = verdict_line(result, allow_incomparable=allow_incomparable)
    title = f"{base_name} -> {new_name} (factor {factor}, alpha {alpha})"
    if fmt == "csv":  # the records alone on stdout; the verdict and noise notes on stderr
        emit(write_records(comparison_records(rows, only_changed=only_changed), fmt))
        for line in [verdict, title, *result.notes]:
            err.print(line, markup=False)
    elif fmt == "json":
        records = comparison_records(rows, only_changed=only_changed)
        text = write_records(
            records,
            fmt,
            verdict=verdict,
            exit_code=exit_code(result, allow_incomparable=allow_incomparable),
            counts=counts(rows),
            regressions=regressions(rows),
            not_compared=not_compared(rows),
            undetectable=result.undetectable,
            base=base_name.split(","),
            new=new_name.split(","),
            factor=factor,
            alpha=alpha,
            summary=summary_line(rows),
            notes=result.notes,
        )
        emit(text)
    else:
        table = Table(
            title, comparison_table(rows, only_changed=only_changed), [summary_line(rows), *result.notes]
        )
        emit(f"{verdict}\n{render([table], fmt)}\n")
    code = exit_code(result, allow_incomparable=allow_incomparable)
    if code:
        err.print(verdict.split(";")[0], markup=False)
        raise typer.Exit(code)


def _compared_env(store) -> dict:
    """The run's environment plus the plugin overrides it ran with (`run --allow-override`): a name a
    plugin replaced holds another implementation's numbers, so runs with other overrides do not compare."""
    return {**store.manifest.get("env", {}), "overrides": tuple(store.manifest.get("overrides") or ())}


def _open_runs(base, new, baseline: bool, baselines: Path | None, results: Path, any_machine: bool):
    """(base stores, new stores, the base's name): two run lists, or the new run and its saved baseline."""
    if not baseline:
        if base is None or new is None:
            raise NormbenchError("compare needs BASE and NEW run ids, or --baseline [NEW]")
        base_runs = [RunStore.open(results, r) for r in base.split(",")]
        new_runs = [RunStore.open(results, r) for r in new.split(",")]
        return base_runs, new_runs, base
    if new is not None:
        raise NormbenchError("with --baseline, give only the new run (the baseline is the base)")
    new_runs = [RunStore.open(results, r) for r in (base or "latest").split(",")]
    found = saved.find(
        baselines or saved.BASELINES_DIR,
        new_runs[0].manifest.get("env", {}),
        new_runs[0].manifest.get("suite"),
        any_machine=any_machine,
    )
    mine = saved.machine_fingerprint(new_runs[0].manifest.get("env", {}))
    where = "" if found.fingerprint == mine else f"; another machine than this run's {mine}"
    err.print(
        f"baseline: {found.run_id} (machine {found.fingerprint}, suite {found.suite}{where})", markup=False
    )
    return [found.store], new_runs, f"baseline {found.run_id}"


def _check_distinct(base_runs, new_runs) -> None:
    """A run compared with itself passes whatever it holds: a gate built that way can never fail."""
    same = sorted({s.run_id for s in base_runs} & {s.run_id for s in new_runs})
    if same:
        raise NormbenchError(
            f"run {same[0]} is on both sides: compare needs two different runs (a run against itself always "
            "passes); for timings on a pull request, `normbench ab BASE` times base and head in one job"
        )


def _check_something_in_common(base, new, base_store, new_store) -> None:
    """Two runs that share no case (and no bench kind whose cases pool over seeds) have nothing to compare:
    that is bad input, not a pass and not an inconclusive gate."""
    shared_cases = set(base["case_id"].dropna()) & set(new["case_id"].dropna())
    if shared_cases:
        return
    shared_kinds = set(base["bench"].dropna()) & set(new["bench"].dropna())
    if shared_kinds and not base.empty and not new.empty:
        return  # cases pooled over seeds match by parameters; compare names what it could not match
    raise NormbenchError(
        f"runs {base_store.run_id} (suite {base_store.manifest.get('suite')!r}) and {new_store.run_id} "
        f"(suite {new_store.manifest.get('suite')!r}) have no case in common: nothing to compare"
    )
