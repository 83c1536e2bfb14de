"""The report: each bench kind's tables for the rows it owns, then the cases that were not ok."""

from __future__ import annotations

import pandas as pd

from normbench.analysis.tables import ReportOptions, Table, failures_table
from normbench.results.schema import FIXED_COLUMNS

FIXED = set(FIXED_COLUMNS)


def build_tables(frame: pd.DataFrame, manifests: list[dict], *, baseline: str | None = None) -> list[Table]:
    from normbench.benches import all_benches
    from normbench.results.env import machines_of

    machine = machines_of(manifests)
    opts = ReportOptions(baseline=baseline, machine=machine)
    tables: list[Table] = []
    benches = all_benches()
    order = {k: i for i, k in enumerate(("latency", "block", "jacobian", "init", "stability"))}
    for kind in sorted(dict.fromkeys(frame["bench"]), key=lambda k: (order.get(k, len(order)), k)):
        if kind in benches:
            tables.extend(benches[kind].report(bench_rows(frame, benches[kind]), opts))
    claims = list(dict.fromkeys(c for m in manifests for c in m.get("claims", [])))
    if claims:
        from normbench.analysis.claims import evaluate
        from normbench.analysis.claims.summary import claims_note

        verdicts = evaluate(claims, frame)
        tables.append(Table("Claims", verdicts, claims_note(verdicts)))
    if (failed := failures_table(frame)) is not None:
        tables.append(failed)
    if (busy := busy_machine_warning(frame, manifests)) is not None:
        tables.append(busy)
    if not tables:
        tables.append(Table("No results", pd.DataFrame({"note": ["the run stored no rows yet"]})))
    return tables


def markdown_header(manifests: list[dict]) -> str:
    from normbench.results.env import machine_summary

    lines = ["# normbench report", ""]
    for m in manifests:
        lines.append(
            f"- run `{m['run_id']}`: suite `{m.get('suite')}` ({m.get('suite_source')}, sha256 "
            f"{m.get('suite_sha256', '')[:12]}), started {m.get('started')}, {machine_summary(m.get('env', {}))}"
        )
    return "\n".join(lines) + "\n\n"


def busy_machine_warning(frame: pd.DataFrame, manifests: list[dict]) -> Table | None:
    """Timings taken while other processes competed for the CPU are not this machine's speed: say so."""
    load = frame.loc[frame["metric"] == "loadavg_1m", "value"]
    cores = min((m.get("env", {}).get("cpu_count") or 0) for m in manifests) if manifests else 0
    if load.empty or not cores or load.max() <= cores:
        return None
    busy = int((load > cores).sum())
    return Table(
        "Warning: busy machine",
        pd.DataFrame(
            {
                "cases with 1-min load above the core count": [f"{busy} of {len(load)}"],
                "max load": [f"{load.max():.1f} on {cores} cores"],
            }
        ),
        ["Latencies from these cases include time stolen by other processes; rerun on a quiet machine."],
    )


def bench_rows(frame: pd.DataFrame, bench) -> pd.DataFrame:
    """One bench kind's rows with its own column types: other kinds' parameter columns (all null here)
    dropped, and integer parameters back to integers (a concat with rows lacking them made them float)."""
    rows = frame[frame["bench"] == bench.kind]
    rows = rows.drop(columns=[c for c in rows.columns if c not in FIXED and rows[c].isna().all()])
    for key, spec in bench.params.items():
        if spec.type is int and key in rows and rows[key].dtype.kind == "f":
            rows = rows.assign(**{key: rows[key].astype("Int64")})
    return rows
