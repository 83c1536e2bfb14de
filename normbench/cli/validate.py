"""Check suite files without running them: every problem, with its key path."""

from __future__ import annotations

from collections import Counter
from typing import Annotated

import typer

from normbench.cli._common import cli_errors, complete_suites, out
from normbench.core.errors import SuiteError, printable
from normbench.suite.catalog import resolve
from normbench.suite.expand import expand
from normbench.suite.load import load_suite

NAME = "validate"
PANEL = "Suites"


@cli_errors
def command(
    suites: Annotated[
        list[str],
        typer.Argument(
            help="Suite TOML files, or names of shipped suites.",
            show_default=False,
            autocompletion=complete_suites,
        ),
    ],
) -> None:
    errors: list[SuiteError] = []
    for path in suites:
        try:
            suite = load_suite(resolve(path))
        except SuiteError as exc:
            errors.append(exc)
            continue
        cases = expand(suite)
        kinds = Counter(c.kind for c in cases)
        summary = ", ".join(f"{n} {k}" for k, n in kinds.items())
        out.print(f"{path}: ok — {sum(kinds.values())} cases ({summary})", markup=False)
        if len(suite.benches) > 1:  # one line per [[bench]] table, by its label
            per_bench = Counter(c.bench_index for c in cases)
            for spec in suite.benches:
                out.print(
                    printable(f"  bench[{spec.index}] {spec.label}: {per_bench[spec.index]} cases"),
                    markup=False,
                )
    if errors:
        if len(errors) == 1:
            raise errors[0]
        merged = SuiteError(", ".join(e.source for e in errors), [p for e in errors for p in e.problems])
        merged.args = ("\n".join(str(e) for e in errors),)
        raise merged
