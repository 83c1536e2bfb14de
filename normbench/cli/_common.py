"""What every command shares: the error policy (one clear message, exit 2, traceback only with
NORMBENCH_DEBUG=1), consoles, and small option parsers."""

from __future__ import annotations

import functools
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from normbench.core.errors import NormbenchError, SuiteError, debug_enabled, printable
from normbench.core.settings import env_setting
from normbench.results.naming import run_manifests
from normbench.results.paths import results_default
from normbench.suite.catalog import packaged_suites, registered

MIN_WIDTH = 40  # narrower is a terminal that reports no size (COLUMNS=0 in some CI shells): clamped


def _console(**options) -> Console:
    """A console for messages (emoji=False: a ':x:' in a case label stays as written). Rich reads COLUMNS
    itself, and at 0 prints nothing at all: the width is clamped."""
    console = Console(highlight=False, soft_wrap=True, emoji=False, **options)
    if console.width < MIN_WIDTH:
        console.width = max(MIN_WIDTH, terminal_width())
    return console


RESULTS_DIR = results_default()
# The --results option of every command: NORMBENCH_RESULTS through typer's envvar=, so --help shows it.
RESULTS_HELP = "Results directory."


def results_option(help: str = RESULTS_HELP):
    return typer.Option(
        "--results",
        "-r",
        help=help,
        envvar="NORMBENCH_RESULTS",
        show_envvar=True,
        callback=_results_value,
    )


def runs_argument(help: str = "Run ids, or 'latest' (default)."):
    """The RUNS argument of a command that reads stored runs (several ids combine shards)."""
    return typer.Argument(help=help, show_default=False, autocompletion=complete_runs)


# Options more than one command declares, each declared once.
Threads = Annotated[
    int | None,
    typer.Option(
        help="torch CPU threads (default: the suite's `threads`, else torch's choice).", min=1, max=1024
    ),
]
Only = Annotated[
    list[str] | None,
    typer.Option("--only", help="Only the cases whose label contains PATTERN (globs allowed); repeatable."),
]
Markdown = Annotated[
    Path | None, typer.Option("--markdown", help="Also write the pull-request comment (as --format md) here.")
]


def _results_value(value: Path) -> Path:
    """A blank NORMBENCH_RESULTS (click passes one of spaces on) is unset, as an empty one is."""
    return results_default() if value is None or not str(value).strip() else value


def emit(text: str) -> None:
    """Text for stdout that is data or a whole report: written as is, whatever the terminal's size or
    styling (machine formats never depend on the terminal)."""
    sys.stdout.write(text)
    sys.stdout.flush()


class ReportFormat(StrEnum):
    """report: display tables (github, plain, md, latex) or numeric records (csv, json)."""

    github = "github"
    plain = "plain"
    md = "md"
    latex = "latex"
    csv = "csv"
    json = "json"


class ExportFormat(StrEnum):
    parquet = "parquet"
    csv = "csv"
    jsonl = "jsonl"
    gab = "gab"  # github-action-benchmark, customSmallerIsBetter
    bmf = "bmf"  # Bencher Metric Format


class PlotFormat(StrEnum):
    png = "png"
    svg = "svg"
    pdf = "pdf"


def terminal_width() -> int:
    """The terminal's width when stdout is one; else COLUMNS when set; else 120 (CI logs, pipes); never
    below MIN_WIDTH."""
    import shutil

    if sys.stdout.isatty():
        size = shutil.get_terminal_size((120, 24)).columns
        return max(MIN_WIDTH, size or 120)
    columns = env_setting("COLUMNS")
    return max(MIN_WIDTH, int(columns)) if columns is not None and columns.isdigit() else 120


def complete_runs(ctx, incomplete: str) -> list[str]:
    """Shell completion of run ids: 'latest', 'latest:SUITE' for each suite with a run, and the runs under
    the results folder (the command's --results when given, else NORMBENCH_RESULTS, else ./results),
    newest first. After a comma (compare's lists of shards) the last id is completed."""
    return _run_ids(ctx, incomplete, unfinished=False)


def complete_unfinished_runs(ctx, incomplete: str) -> list[str]:
    """Shell completion of `run --resume`: only the runs with cases left (interrupted, or stopped)."""
    return _run_ids(ctx, incomplete, unfinished=True)


def _run_ids(ctx, incomplete: str, unfinished: bool) -> list[str]:
    done, _, word = incomplete.rpartition(",")
    head = f"{done}," if done else ""
    root = results_default()
    if ctx is not None and ctx.params.get("results") is not None:
        source = ctx.get_parameter_source("results")
        if source is not None and source.name != "DEFAULT":  # --results on the command line, or its envvar
            root = Path(ctx.params["results"])
    try:
        found = run_manifests(root)
    except (OSError, NormbenchError):
        found = []
    if unfinished:
        found = [(r, m) for r, m in found if m.get("status") != "complete"]
        names = [r for r, _ in reversed(found)]
    else:
        suites = sorted({str(m["suite"]) for _, m in found if m.get("suite")})
        names = ["latest", *(f"latest:{s}" for s in suites), *(r for r, _ in reversed(found))]
    return [head + n for n in names if n.startswith(word)]


def complete_git_refs(incomplete: str) -> list[str]:
    """Shell completion of a commit (`ab BASE`): HEAD~1, then the branches, tags and remote branches of
    the repository here (none outside one; git is given a second at most)."""
    import subprocess

    try:
        listed = subprocess.run(
            ["git", "for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/tags", "refs/remotes"],
            capture_output=True,
            text=True,
            timeout=1,
            check=True,
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return []
    return [r for r in ["HEAD~1", *listed] if r.startswith(incomplete)]


def complete_norms(incomplete: str) -> list[str]:
    """Shell completion of norms and norm:impl (`run --norms`, comma-separated; `report --speedup-vs`)."""
    done, _, word = incomplete.rpartition(",")
    head = f"{done}," if done else ""
    names = [
        n
        for name, norm in sorted(registered()[0].items())
        for n in (name, *(f"{name}:{i}" for i in norm.impls))
    ]
    return [head + n for n in names if n.startswith(word)]


def choices(*values: str):
    """Shell completion of an option with fixed values (--executor local|ray)."""
    return lambda incomplete: [v for v in values if v.startswith(incomplete)]


def complete_benches(incomplete: str) -> list[str]:
    """Shell completion of bench kinds (`run --bench`): the registered ones, plugins included."""
    return [k for k in sorted(registered()[1]) if k.startswith(incomplete)]


def complete_suites(incomplete: str) -> list[str]:
    """Shell completion of suite names (the shipped suites) and .toml files here."""
    names = list(packaged_suites())
    try:
        names += sorted(
            str(p) for p in Path(".").glob("**/*.toml") if "suites" in p.parts or p.parent == Path(".")
        )
    except OSError:
        pass
    return [n for n in names if n.startswith(incomplete)]


def cli_errors(fn):
    """Turn a NormbenchError into its message on stderr and exit code 2; an OSError nobody anticipated
    (a full disk, a permission) the same way, as `error: PATH: reason`. Control characters in messages
    (they quote file names and suite strings) are escaped."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (NormbenchError, OSError) as exc:
            if debug_enabled():
                raise
            if isinstance(exc, SuiteError):
                n = len(exc.problems)
                for line in str(exc).splitlines():
                    err.print(printable(line), markup=False)
                source = printable(exc.source)
                err.print(f"{source}: {n} problem{'s' if n != 1 else ''}; nothing was run", markup=False)
            elif isinstance(exc, OSError):
                where = f"{exc.filename}: " if exc.filename else ""
                err.print(printable(f"error: {where}{exc.strerror or exc}"), markup=False)
            else:
                err.print(printable(f"error: {exc}"), markup=False)
            err.print("(set NORMBENCH_DEBUG=1 for the traceback)", style="dim")
            raise typer.Exit(2) from None

    return wrapper


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        i, n = (int(p) for p in text.split("/"))
    except ValueError:
        raise NormbenchError(f"--shard {text!r}: expected i/N, e.g. 2/8") from None
    if not 1 <= i <= n:
        raise NormbenchError(f"--shard {text!r}: need 1 <= i <= N")
    return i, n


err = _console(stderr=True)
out = _console()


def say(text: str) -> None:
    """A message line on stderr, printed as written (a bracket in it is never read as rich markup)."""
    err.print(text, markup=False)
