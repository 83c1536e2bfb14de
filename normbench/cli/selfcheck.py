"""Check whether latency numbers can be trusted on this machine: normbench's timer vs torch.utils.benchmark, side by side, in fresh processes taking the ops in forward and reversed order (agreement, order-dependence, run-to-run spread, page faults). Exit 1 when an op is off."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from normbench import selfcheck as sc
from normbench.cli._common import cli_errors, err, out
from normbench.core.errors import NormbenchError
from normbench.norms import all_norms

NAME = "selfcheck"
PANEL = "Inspect"


@cli_errors
def command(
    op: Annotated[
        list[str] | None,
        typer.Option(
            help="norm:impl:TOKENSxHIDDEN to time (repeatable; default: five ops, normbench/selfcheck.py)."
        ),
    ] = None,
    runs: Annotated[int, typer.Option(help="Processes per order (forward and reversed).", min=1)] = 2,
    threads: Annotated[int, typer.Option(help="torch threads for both timers.", min=1)] = 1,
    pairs: Annotated[int, typer.Option(help="Alternations of the two timers per op and process.", min=1)] = 2,
    min_run_time: Annotated[
        float, typer.Option(help="blocked_autorange's min_run_time (s) per measurement.", min=0.01)
    ] = 0.2,
    as_json: Annotated[bool, typer.Option("--json", help="Print the per-op summary as JSON.")] = False,
) -> None:
    try:
        ops = [sc.parse_op(t) for t in op] if op else [sc.Op(*o) for o in sc.DEFAULT_OPS]
    except ValueError as exc:
        raise NormbenchError(str(exc)) from None
    _check_ops(ops)
    processes = sc.run_processes(
        ops,
        runs=runs,
        threads=threads,
        pairs=pairs,
        samples=15,
        min_run_time=min_run_time,
        say=lambda m: err.print(m, style="dim"),
    )
    rows = sc.summarize(processes)
    for row in rows:
        row["verdict"] = sc.verdict(row)
    if as_json:
        out.print(json.dumps(rows, indent=2), markup=False)
    else:
        _print_table(rows, runs, threads)
    if any(r["verdict"] != "ok" for r in rows):
        raise typer.Exit(1)


def _check_ops(ops) -> None:
    norms = all_norms()
    for o in ops:
        if o.norm not in norms or o.impl not in norms[o.norm].impls:
            raise NormbenchError(
                f"--op {o.norm}:{o.impl}: no such norm implementation (see `normbench list`)"
            )


def _print_table(rows: list[dict], runs: int, threads: int) -> None:
    from normbench.core.tables import format_seconds

    head = [
        "op",
        "normbench",
        "torch.utils.benchmark",
        "agreement",
        "worst",
        "fwd/rev order",
        "CV nb",
        "CV torch",
        "faults/call",
        "verdict",
    ]
    lines = [head]
    for r in rows:
        lines.append(
            [
                r["op"],
                format_seconds(r["normbench_s"]),
                format_seconds(r["torch_s"]),
                f"{r['agreement']:.3f}",
                f"{r['worst_agreement']:.3f}",
                f"{r['order_ratio']:.3f}",
                f"{100 * r['cv_normbench']:.1f}%",
                f"{100 * r['cv_torch']:.1f}%",
                f"{r['faults_per_call']:.1f}",
                r["verdict"],
            ]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    for line in lines:
        out.print("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)), markup=False)
    out.print(
        f"{2 * runs} fresh processes ({runs} per order), {threads} thread(s); medians over processes. "
        "agreement = normbench / torch.utils.benchmark in the same process (1.000 = agree); "
        "fwd/rev = normbench's median with the ops in forward / reversed order; CV = run-to-run spread "
        "across processes. ok = within 5% in every process and order, normbench's CV no worse than "
        "torch's (or under 5%), no page faults in timed calls.",
        markup=False,
    )
