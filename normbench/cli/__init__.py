"""The `normbench` command. Each non-private module in this package is one command (NAME, PANEL, a
`command` function, help from its docstring); none imports torch at module level, so `normbench --help`
is instant."""

from __future__ import annotations

import importlib
import pkgutil

import typer

from normbench.core.version import __version__

app = typer.Typer(
    name="normbench",
    help="Benchmarks for normalization layers in PyTorch: latency, Jacobian bounds, training stability.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)

ORDER = ["run", "validate", "list", "report", "compare", "plot", "env"]


def _command_modules():
    names = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
    names.sort(key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))
    return [importlib.import_module(f"{__name__}.{n}") for n in names]


for _module in _command_modules():
    _help = (_module.__doc__ or "").strip().replace("\n", " ")
    app.command(
        _module.NAME,
        help=_help,
        rich_help_panel=getattr(_module, "PANEL", None),
        cls=getattr(_module, "COMMAND_CLASS", None),  # run: the bench parameters as flags
    )(_module.command)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"normbench {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print normbench's version and exit."
    ),
) -> None:
    """Benchmarks for normalization layers in PyTorch: latency, Jacobian bounds, training stability."""


def main() -> None:
    app()
