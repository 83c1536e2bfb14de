"""The `normbench` command. One module per command; none imports torch at module level, so
`normbench --help` is instant."""

from __future__ import annotations

import typer

from normbench.cli import env, list, report, run, validate

app = typer.Typer(
    name="normbench",
    help="Benchmarks for normalization layers in PyTorch: latency, Jacobian bounds, training stability.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)

for module in (run, validate, list, report, env):
    app.command(module.NAME, help=module.__doc__, rich_help_panel=getattr(module, "PANEL", None))(module.command)


def main() -> None:
    app()
