"""A run store made by hand, as a test needs one: every bench kind's columns declared, as `run` declares its suite's."""

from __future__ import annotations

from normbench.benches import all_benches
from normbench.results.schema import declare_columns
from normbench.results.store import RunStore


def create_store(results_dir, manifest: dict) -> RunStore:
    return RunStore.create(results_dir, manifest, columns=declare_columns(all_benches().values()))
