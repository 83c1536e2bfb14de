"""Print this machine's environment fingerprint (what every run stores), for bug reports."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from normbench.cli._common import cli_errors, out

NAME = "env"
PANEL = "Inspect"


@cli_errors
def command(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    from normbench.results.env import fingerprint

    env = fingerprint()
    if as_json:
        out.print(json.dumps(env, indent=2), markup=False)
        return
    width = max(map(len, env))
    for key, value in env.items():
        out.print(f"{key:<{width}}  {value}", markup=False)
