"""The report: each bench kind's tables for the rows it owns, then the cases that were not ok."""

from __future__ import annotations

import pandas as pd

from normbench.analysis.tables import ReportOptions, Table, failures_table


def build_tables(frame: pd.DataFrame, manifests: list[dict], *, baseline: str | None = None) -> list[Table]:
    from normbench.benches import all_benches
    from normbench.results.env import machine_summary

    machine = "; ".join(sorted({machine_summary(m.get("env", {})) for m in manifests}))
    opts = ReportOptions(baseline=baseline, machine=machine)
    tables: list[Table] = []
    benches = all_benches()
    for kind in dict.fromkeys(frame["bench"]):
        if kind in benches:
            tables.extend(benches[kind].report(frame[frame["bench"] == kind], opts))
    if (failed := failures_table(frame)) is not None:
        tables.append(failed)
    if not tables:
        tables.append(Table("No results", pd.DataFrame({"note": ["the run stored no rows yet"]})))
    return tables


def markdown_header(manifests: list[dict]) -> str:
    from normbench.results.env import machine_summary

    lines = ["# normbench report", ""]
    for m in manifests:
        lines.append(f"- run `{m['run_id']}`: suite `{m.get('suite')}` ({m.get('suite_source')}, sha256 "
                     f"{m.get('suite_sha256', '')[:12]}), started {m.get('started')}, {machine_summary(m.get('env', {}))}")
    return "\n".join(lines) + "\n\n"
