"""Check whether latency numbers can be trusted on this machine: normbench's timer vs torch.utils.benchmark, side by side, in fresh processes taking the ops in forward and reversed order (agreement, order-dependence, run-to-run spread, page faults). Exit 1 when an op is off."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from normbench import selfcheck as sc
from normbench.cli._common import cli_errors, emit, err, out, terminal_width
from normbench.core.errors import NormbenchError
from normbench.core.jsondata import json_text
from normbench.core.settings import check_number

NAME = "selfcheck"
PANEL = "Inspect"


@cli_errors
def command(
    op: Annotated[
        list[str] | None,
        typer.Option(
            help="norm:impl:TOKENSxD to time (repeatable; default: five ops, normbench/selfcheck.py)."
        ),
    ] = None,
    runs: Annotated[int, typer.Option(help="Processes per order (forward and reversed).", min=1)] = 2,
    threads: Annotated[int, typer.Option(help="torch threads for both timers.", min=1)] = 1,
    pairs: Annotated[int, typer.Option(help="Alternations of the two timers per op and process.", min=1)] = 2,
    min_run_time: Annotated[
        float, typer.Option(help="blocked_autorange's min_run_time (s) per measurement (0.01 to 600).")
    ] = 0.2,
    pages: Annotated[
        str | None,
        typer.Option(
            help="Page state of the measuring processes: huge or base (default: as `normbench run`).",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the per-op summary as JSON.")] = False,
) -> None:
    check_number(min_run_time, "--min-run-time", at_least=0.01, at_most=600)  # nan and inf pass a range
    state = sc.page_state(pages)
    try:
        ops = [sc.parse_op(t) for t in op] if op else [sc.Op(*o) for o in sc.DEFAULT_OPS]
    except ValueError as exc:
        raise NormbenchError(str(exc)) from None
    sc.check_ops(ops)
    kw = dict(runs=runs, threads=threads, pairs=pairs, samples=15, min_run_time=min_run_time)
    say = lambda m: err.print(m, style="dim")  # noqa: E731
    processes = sc.run_processes(ops, **kw, pages=state, say=say)
    plain = sc.run_processes(ops, **kw, plain=True, say=say)
    rows = sc.summarize(processes, plain)
    for row in rows:
        row["verdict"] = sc.verdict(row)
    if as_json:
        emit(json_text(rows, indent=2) + "\n")
    else:
        _print_table(rows, runs, threads, state)
    if any(r["verdict"] != "ok" for r in rows):
        raise typer.Exit(1)


def _print_table(rows: list[dict], runs: int, threads: int, state: str) -> None:
    """The per-op table fitted to the terminal (continuation tables, never a line wider), what its
    columns mean wrapped under it, and one line of advice."""
    import pandas as pd

    from normbench.analysis.fit import fit_table, wrap
    from normbench.core.tables import Table, format_seconds, render

    width = terminal_width()
    frame = pd.DataFrame(
        {
            "op": r["op"],
            "verdict": r["verdict"],  # first: the answer stays in the first part at any width
            "normbench": format_seconds(r["normbench_s"]),
            "torch (same state)": format_seconds(r["torch_s"]),
            "torch (plain)": format_seconds(r["torch_plain_s"]),
            "plain/same": f"{r['state_cost']:.3f}",
            "agreement": f"{r['agreement']:.3f}",
            "worst": f"{r['worst_agreement']:.3f}",
            "fwd/rev order": f"{r['order_ratio']:.3f}",
            "CV nb": f"{100 * r['cv_normbench']:.1f}%",
            "CV torch": f"{100 * r['cv_torch']:.1f}%",
            "faults/call": f"{r['faults_per_call']:.1f}",
        }
        for r in rows
    )
    parts = fit_table(Table("normbench's timer against torch.utils.benchmark", frame, keys=["op"]), width)
    out.print(render(parts, "plain", width), markup=False)
    legend = (
        f"{2 * runs} fresh processes ({runs} per order), {threads} thread(s), pages={state}; medians over "
        "processes. same state = torch.utils.benchmark in normbench's measuring process (allocator policy "
        "and pages as `normbench run`); plain = it alone in a plain process (another "
        f"{2 * runs}); plain/same = what the state changes. "
        "agreement = normbench / torch.utils.benchmark (same state) in the same process (1.000 = agree); "
        "fwd/rev = normbench's median with the ops in forward / reversed order; CV = run-to-run spread "
        "across processes. ok = within 5% in every process and order, normbench's CV no worse than "
        "torch's (or under 5%), no page faults in timed calls."
    )
    out.print("\n".join(wrap(legend, width, indent="")), markup=False)
    out.print("\n".join(wrap(advice(rows), width, indent="  ")), markup=False)


def advice(rows: list[dict]) -> str:
    """One line: what to do about what the table shows (a busy machine first: it explains the rest)."""
    off = [r for r in rows if r["verdict"] != "ok"]
    if not off:
        return "advice: latencies can be trusted here (every op within 5% of torch.utils.benchmark)."
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    problems = {p for r in off for p in r["verdict"].split(", ")}
    if load > cores - 0.5:
        return (
            f"advice: the machine is busy (1-minute load {load:.1f} on {cores} cores): rerun `normbench "
            "selfcheck` when it is quiet; until then compare only paired ratios (`normbench ab`, `compare`)."
        )
    if "faults" in problems:
        return (
            "advice: page faults in timed calls: rerun with the other page state (`--pages base` or "
            "`--pages huge`) and keep the one that passes for `normbench run --pages`."
        )
    return (
        f"advice: {len(off)} of {len(rows)} ops off ({', '.join(sorted(problems))}) on a quiet machine: "
        "rerun with more processes (`--runs 4`); if it stays off, trust paired ratios over absolute times."
    )
