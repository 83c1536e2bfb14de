"""Rewrite older runs in place to the current result schema (as asv's `asv update`): renamed columns,
declared columns for version-1 runs; atomically per file, the manifest last, so an interrupted upgrade is
finished by the next one. Idempotent. Accepts run ids, 'latest', 'latest:SUITE', run folders and baselines
(a baseline is a run folder). See docs/results.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from normbench.cli._common import RESULTS_DIR, cli_errors, out, results_option, runs_argument, say
from normbench.core.errors import NormbenchError
from normbench.results.lookup import open_run
from normbench.results.upgrade import upgrade_run
from normbench.suite.columns import version_1_columns

NAME = "upgrade"
PANEL = "Results"


@cli_errors
def command(
    runs: Annotated[
        list[str] | None, runs_argument("Run ids, 'latest', 'latest:SUITE' or run folders (default: latest).")
    ] = None,
    baselines: Annotated[
        Path | None,
        typer.Option("--baselines", help="Also upgrade every run saved in this baselines folder."),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would change; write nothing.")] = False,
    results: Annotated[Path, results_option()] = RESULTS_DIR,
) -> None:
    stores = [open_run(ref, results) for ref in runs or ([] if baselines else ["latest"])]
    if baselines is not None:
        if not baselines.is_dir():
            raise NormbenchError(f"--baselines {baselines}: not a folder")
        stores += [open_run(m.parent, results) for m in sorted(baselines.glob("*/*/*/manifest.json"))]
    for store in stores:
        out.print(upgrade_run(store, version_1_columns, dry_run=dry_run, say=say), markup=False)
