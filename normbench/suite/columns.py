"""The columns a run declares, from its suite: what `run` writes into a new run's manifest and what
`normbench upgrade` gives a version-1 run, which declared none (results/upgrade.py). At the suite layer
because it expands suites and asks the bench registry; the results layer below knows neither."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from normbench.benches import all_benches
from normbench.results.schema import columns_of, declare_columns, merge_types
from normbench.suite.expand import expand
from normbench.suite.load import parse_suite


def version_1_columns(manifest: dict[str, Any], parts: list[Path]) -> dict[str, str]:
    """A version-1 run's columns: those its stored suite declares today, plus any its parts hold (a suite
    this normbench no longer accepts still gives the parts' own columns)."""
    import pyarrow.parquet as pq

    columns: dict[str, str] = {}
    if manifest.get("suite_text"):
        try:
            suite = parse_suite(
                manifest["suite_text"],
                manifest.get("suite_source", "suite"),
                manifest.get("suite_includes") or {},
            )
            cases = expand(suite)
            benches = all_benches()
            kinds = {c.kind for c in cases}
            columns = declare_columns([benches[k] for k in kinds if k in benches], [c.params for c in cases])
        except Exception:  # noqa: BLE001 -- any suite this version refuses: fall back to the parts' columns
            columns = {}
    if not columns:
        columns = declare_columns([])
    for part in parts:
        for name, kind in columns_of(pq.read_schema(part)).items():
            columns[name] = merge_types(columns[name], kind) if name in columns else kind
    return columns
