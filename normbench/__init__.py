"""normbench: benchmarks for normalization layers in PyTorch."""

from __future__ import annotations

import os
from pathlib import Path

from normbench.core.version import __version__
from normbench.results.lookup import open_run
from normbench.results.paths import results_default
from normbench.results.store import read_stores

__all__ = ["__version__", "load"]


def load(runs="latest", results=None, *, columns=None, metrics=None):
    """Rows of one or several runs as one pandas DataFrame, with the run's declared column types.

    runs: a run id, "latest", "latest:SUITE" (the newest run of that suite), a run folder's path (a Path, or
        a string with a "/"), or a list of them (the shards of one sweep combine into one frame).
    results: the results directory of run ids (default: $NORMBENCH_RESULTS, else "results"; empty is unset).
    One row per measured value (metric, unit, value), the case's parameters as columns (integers Int64,
    booleans boolean, <NA> where another bench kind lacks one). Example: README.md, `normbench.load`.
    columns, metrics: only these columns and these metrics' rows (the rest is never turned into pandas)."""
    refs = [runs] if isinstance(runs, str | os.PathLike) else list(runs)
    folder = Path(results) if results is not None else results_default()
    only = None if columns is None else list(columns) + (["metric"] if metrics is not None else [])
    frame, _ = read_stores([open_run(ref, folder) for ref in refs], only, metrics=metrics)
    if columns is not None and metrics is not None and "metric" not in columns:
        frame = frame.drop(columns="metric")
    return frame
