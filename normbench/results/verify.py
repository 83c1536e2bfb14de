"""Checks before stored parts are used: each part against its run (readable, a planned case, its rows of
that case and run). The manifest's own checks are in results/manifest.py."""

from __future__ import annotations

from pathlib import Path


def part_problem(part: Path, run_id: str, planned: set[str] | None) -> str | None:
    """Why a part cannot be used (None if it can): not a planned case, unreadable, or rows of another
    case or run. Reads the footer and two columns only."""
    import pyarrow.parquet as pq

    if planned is not None and part.stem not in planned:
        return "not a case of this run (a foreign file in parts/)"
    try:
        table = pq.read_table(part, columns=["run_id", "case_id"])
    except Exception as exc:
        return f"unreadable ({type(exc).__name__}: {' '.join(str(exc).split())})"
    return rows_problem(table, part, run_id, planned)


def rows_problem(table, part: Path, run_id: str, planned: set[str] | None) -> str | None:
    if planned is not None and part.stem not in planned:
        return "not a case of this run (a foreign file in parts/)"
    if table.num_rows == 0:
        return "holds no rows"
    if "run_id" not in table.column_names or "case_id" not in table.column_names:
        return "has no run_id/case_id columns"
    runs = set(table.column("run_id").to_pylist())
    cases = set(table.column("case_id").to_pylist())
    if runs != {run_id}:
        return f"its rows belong to run {', '.join(map(str, sorted(runs, key=str)))}, not {run_id}"
    if cases != {part.stem}:
        return f"its rows are of case {', '.join(map(str, sorted(cases, key=str)))}, not {part.stem}"
    return None
