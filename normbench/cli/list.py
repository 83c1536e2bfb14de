"""List norms and their implementations, bench kinds and their parameters, suites, or stored runs."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from normbench.cli._common import RESULTS_DIR, cli_errors, emit, out, results_option, terminal_width
from normbench.core.errors import NormbenchError, printable
from normbench.core.jsondata import json_text
from normbench.core.params import did_you_mean
from normbench.core.plugins import ENV_VAR, installed_plugins
from normbench.results.files import live_writer
from normbench.results.lookup import run_summaries
from normbench.results.naming import list_run_ids
from normbench.results.paths import check_results_dir
from normbench.results.store import RunStore
from normbench.suite.catalog import all_suites, registered

NAME = "list"
PANEL = "Inspect"


class What(StrEnum):
    norms = "norms"
    benches = "benches"
    suites = "suites"
    runs = "runs"
    plugins = "plugins"


@cli_errors
def command(
    what: Annotated[
        str | None,
        typer.Argument(
            help="What to list: norms, benches, suites, runs or plugins (default: all but runs).",
            show_default=False,
            autocompletion=lambda incomplete: [w.value for w in What if w.value.startswith(incomplete)],
        ),
    ] = None,
    results: Annotated[Path, results_option()] = RESULTS_DIR,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="text, or json (with `runs`: one object per run).")
    ] = "text",
) -> None:
    if fmt not in ("text", "json"):
        raise NormbenchError(f"--format {printable(fmt)!r}: text or json")
    what = _what(what)
    if fmt == "json":
        if what != What.runs:
            raise NormbenchError("--format json lists runs: `normbench list runs --format json`")
        return _runs_json(results)
    chosen = [what] if what else [What.norms, What.benches, What.suites, What.plugins]
    listers = {
        What.norms: _norms,
        What.benches: _benches,
        What.suites: _suites,
        What.runs: lambda: _runs(results),
        What.plugins: _plugins,
    }
    for item in chosen:
        listers[item]()


def _line(head: str, text: str) -> None:
    """One entry: its name columns, then its text wrapped at the terminal's width under its own column
    (or under the name when that column leaves too little room); never cut."""
    import textwrap

    width = terminal_width()
    hang = " " * (len(head) if width - len(head) >= 30 else 6)
    lines = textwrap.wrap(head + text, width, subsequent_indent=hang, break_on_hyphens=False)
    out.print("\n".join(lines) or head.rstrip(), markup=False)


def _what(word: str | None) -> What | None:
    """The thing to list; a singular ('norm') is its plural, anything else a one-line error."""
    if word is None:
        return None
    names = [w.value for w in What]
    for name in (word, word + "s", word + "es"):
        if name in names:
            return What(name)
    raise NormbenchError(f"list {printable(word)!r}: one of {', '.join(names)}{did_you_mean(word, names)}")


def _origin(obj) -> str:
    """'' for normbench's own classes, else '  [plugin: module]'."""
    module = type(obj).__module__
    return "" if module.startswith("normbench.") else f"  [plugin: {module}]"


CAPABILITY_MARKS = {
    "exact": "ref",
    "jacobian": "jac",
    "module": "mod",
    "fold": "fold",
    "mixes_tokens": "mix",
}


def _capability_cell(norm) -> str:
    """The declared capabilities as fixed-width marks (a dash where a norm has none), so the column reads
    down the list."""
    caps = norm.capabilities()
    return " ".join(mark if caps[key] else "-" * len(mark) for key, mark in CAPABILITY_MARKS.items())


def _norms() -> None:
    out.print(
        "[bold]norms[/bold] (norm:impl; * = baseline; capabilities: ref = float64 reference (accuracy rows), "
        "jac = Jacobian closed form, mod = nn.Module (models, block bench), fold = folds into a Linear, "
        "mix = statistics over the batch)",
        soft_wrap=False,
    )
    for norm in registered()[0].values():
        _line(f"  {norm.name:<10} {_capability_cell(norm):<20} ", f"{norm.description}{_origin(norm)}")
        for info in norm.impls.values():
            missing = info.missing_requirement()
            mark = "*" if info.name == norm.baseline else " "
            state = f"  [unavailable: {missing}]" if missing else ""
            state += "" if info.default else "  [runs when a suite names it]"
            _line(f"    {mark} {norm.name}:{info.name:<14} ", f"{info.description}{state}")


def _benches() -> None:
    out.print(
        "[bold]bench kinds[/bold] (parameters go in sweep = \\[lists] or params = scalars)", soft_wrap=False
    )
    for bench in registered()[1].values():
        _line(f"  {bench.kind:<10} ", f"{bench.description}{_origin(bench)}")
        for key, spec in bench.params.items():
            _line(f"      {key:<16} ", f"{spec.describe()}{' — ' + spec.help if spec.help else ''}")


def _suites() -> None:
    out.print("[bold]suites[/bold] (run a shipped one by name: `normbench run quick`)", soft_wrap=False)
    for info in all_suites():
        where = info.name if info.origin == "shipped" else str(info.path)
        count = f"{info.cases} cases" if info.cases is not None else "invalid"
        text = info.description if info.cases is not None else info.problem
        _line(printable(f"  {where:<18} {info.origin:<8} {count:>11}  "), printable(text))


def _plugins() -> None:
    rows = installed_plugins()
    env = os.environ.get(ENV_VAR, "")
    out.print(
        "[bold]plugins[/bold] (entry points normbench.norms / .benches / .claims / .plots)", soft_wrap=False
    )
    if not rows and not env:
        out.print("  none installed", markup=False)
    for group, name, module, dist in rows:
        out.print(printable(f"  {group:<18} {name:<16} {module:<32} {dist}"), markup=False)
    if env:
        out.print(printable(f"  {ENV_VAR}={env}"), markup=False)


def _runs_json(results: Path) -> None:

    check_results_dir(results, create=False)
    emit(json_text(run_summaries(results), indent=2) + "\n")


def _runs(results: Path) -> None:
    check_results_dir(results, create=False)
    out.print(f"[bold]runs[/bold] in {printable(results)}/", highlight=False, soft_wrap=False)
    for run_id in list_run_ids(results):
        try:
            store = RunStore.open(results, run_id)
        except NormbenchError as exc:  # a damaged run is listed with the reason, the others still are
            out.print(printable(f"  {run_id:<48} damaged      {exc}"), markup=False)
            continue
        status = store.manifest.get("status", "?")
        if status == "running" and live_writer(store.path) is None:
            status = "interrupted"  # its writer is gone (killed, power loss): `run --resume` finishes it
        planned = len(store.manifest.get("cases", []))
        text = f"  {run_id:<48} {status:<12} {len(store.finished_case_ids())}/{planned} cases"
        out.print(printable(text), markup=False)
