"""Print this machine's environment fingerprint (what every run stores), for bug reports."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from normbench.cli._common import cli_errors, emit, out
from normbench.core.jsondata import json_text
from normbench.results.env import fingerprint
from normbench.suite.catalog import registered

NAME = "env"
PANEL = "Inspect"


@cli_errors
def command(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    registered()  # import the plugins a run imports, so `plugins` lists the same
    env = fingerprint()
    if as_json:
        emit(json_text(env, indent=2) + "\n")
        return
    width = max(map(len, env))
    for key, value in env.items():
        out.print(f"{key:<{width}}  {_text(value)}", markup=False)


def _text(value) -> str:
    """A list of words as words; a nested object as compact JSON."""
    if value == []:
        return "none"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " ".join(value)
    if isinstance(value, list | dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)
