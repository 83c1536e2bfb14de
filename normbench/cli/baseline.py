"""Baselines per machine: `baseline save RUN` keeps a run as this machine's reference for its suite,
`baseline list` shows the saved ones, `baseline show [RUN]` the machine fingerprint of a run (or of this
machine) and its baselines. `normbench compare --baseline [NEW]` compares with them. The folder
(--baselines, $NORMBENCH_BASELINES, default ./baselines) holds <fingerprint>/<suite>/<run_id>/ as plain
Parquet, for git or a CI cache. See docs/ci.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from normbench.cli._common import RESULTS_DIR, cli_errors, complete_runs, emit, err, out, results_option
from normbench.core.errors import NormbenchError
from normbench.core.jsondata import json_text
from normbench.results import baselines as saved
from normbench.results.env import fingerprint
from normbench.results.store import RunStore

NAME = "baseline"
PANEL = "Results"
ACTIONS = ("save", "list", "show")


def _actions(incomplete: str) -> list[str]:
    return [a for a in ACTIONS if a.startswith(incomplete)]


@cli_errors
def command(
    action: Annotated[
        str,
        typer.Argument(help="save RUN | list | show [RUN]", show_default=False, autocompletion=_actions),
    ],
    run: Annotated[
        str | None,
        typer.Argument(
            help="Run id (or 'latest') for save and show.", show_default=False, autocompletion=complete_runs
        ),
    ] = None,
    baselines: Annotated[
        Path | None,
        typer.Option("--baselines", help="Baselines folder (default $NORMBENCH_BASELINES or ./baselines)."),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="plain | json")] = "plain",
    results: Annotated[Path, results_option()] = RESULTS_DIR,
) -> None:
    if action not in ACTIONS:
        raise NormbenchError(f"baseline {action!r}: one of {', '.join(ACTIONS)}")
    if fmt not in ("plain", "json"):
        raise NormbenchError(f"--format {fmt!r}: one of plain, json")
    folder = baselines or saved.BASELINES_DIR
    if action == "save":
        _save(run, results, folder, fmt)
    elif action == "list":
        _list(folder, fmt)
    else:
        _show(run, results, folder, fmt)


def _save(run: str | None, results: Path, folder: Path, fmt: str) -> None:
    if run is None:
        raise NormbenchError("baseline save needs a RUN (a run id or 'latest')")
    kept = saved.save(RunStore.open(results, run), folder, say=lambda m: err.print(m, markup=False))
    _say(
        fmt,
        kept.describe(),
        f"saved {kept.run_id} as the {kept.suite} baseline of machine {kept.fingerprint}",
    )


def _list(folder: Path, fmt: str) -> None:
    found = [b.describe() for b in saved.list_baselines(folder)]
    if fmt == "json":
        emit(json_text(found, indent=1, default=str) + "\n")
    elif not found:
        out.print(f"no baselines in {folder}/", markup=False)
    for b in found if fmt == "plain" else []:
        out.print(
            f"{b['fingerprint']}  {b['suite']}  {b['run_id']}  ({b['cpu']}, torch {b['torch']})",
            markup=False,
        )


def _show(run: str | None, results: Path, folder: Path, fmt: str) -> None:
    env = RunStore.open(results, run).manifest.get("env", {}) if run else _this_machine()
    fp = saved.machine_fingerprint(env)
    mine = [b.describe() for b in saved.list_baselines(folder) if b.fingerprint == fp]
    info = {"fingerprint": fp, **saved.fingerprint_fields(env), "baselines": mine}
    whose = f"run {run}" if run else "this machine"
    lines = [f"machine fingerprint of {whose}: {fp}"]
    lines += [f"  {k}: {v}" for k, v in saved.fingerprint_fields(env).items()]
    lines += [f"  baseline of {b['suite']}: {b['run_id']}" for b in mine] or [f"  no baselines in {folder}/"]
    _say(fmt, info, "\n".join(lines))


def _say(fmt: str, data: dict, text: str) -> None:
    if fmt == "json":
        emit(json_text(data, indent=1, default=str) + "\n")
    else:
        out.print(text, markup=False)


def _this_machine() -> dict:
    return fingerprint()
