"""The tidy row schema. One row per measured value; the case's parameters are columns too (and the whole
parameter dict as JSON in `params`, so a row can be traced to its case exactly).

Version history (a reader upgrades older versions step by step and refuses newer ones):
    1: first version.
"""

from __future__ import annotations

SCHEMA_VERSION = 1

# Columns every row has, in this order; bench-specific labels (layer, ...) and case parameters follow.
FIXED_COLUMNS = [
    "run_id",
    "case_id",
    "bench",
    "norm",
    "impl",
    "metric",
    "unit",
    "value",
    "sample",  # index of a raw sample, null for derived values
    "step",  # training step for time series, null otherwise
    "status",  # ok | failed | skipped | unavailable | bench-specific outcomes (diverged, stuck, ...)
    "error",  # the reason when status is not ok
    "session",  # which invocation wrote the case: 0 = the first `run`, 1 = the first --resume, ...
    "params",  # the case's resolved parameters as JSON
]

# Arrow types of the fixed columns, so that every part has the same schema whatever its rows hold: a
# failed case's part has no sample index, and an untyped (null) column there would turn `sample` into
# Python objects in every frame that concatenates it with an ok part.
FIXED_TYPES = {c: "string" for c in FIXED_COLUMNS} | {
    "value": "float64",
    "sample": "int64",
    "step": "int64",
    "session": "int64",
}

# Statuses that count as a failure of the run (exit code 1). skipped/unavailable are expected on some
# machines (no CUDA, no Liger); diverged/stuck are results of the stability bench, not failures.
FAILED_STATUSES = {"failed"}

RESERVED = set(FIXED_COLUMNS)

# Upgrade functions: UPGRADES[v] turns a frame of version v into version v + 1.
UPGRADES: dict = {}
