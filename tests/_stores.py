"""A run store made by hand, as a test needs one: every bench kind's columns declared, as `run` declares its suite's."""

from __future__ import annotations

from normbench.results.store import RunStore
from normbench.suite.columns import every_kind_columns


def create_store(results_dir, manifest: dict) -> RunStore:
    return RunStore.create(results_dir, manifest, columns=every_kind_columns())
