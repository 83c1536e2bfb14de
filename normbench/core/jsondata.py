"""JSON that every JSON reader accepts. Python writes NaN and Infinity as bare tokens, which are not JSON
(RFC 8259): jq, JavaScript's JSON.parse and the CI services that ingest normbench's exports reject the file.
Every JSON normbench writes goes through json_text, where a non-finite number is null (a missing value)."""

from __future__ import annotations

import json
import math
from typing import Any


def finite_or_none(value: Any) -> Any:
    """`value` with every non-finite float (NaN, ±inf; numpy scalars too) replaced by None, recursively."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_none(v) for v in value]
    if hasattr(value, "item") and hasattr(value, "dtype"):  # a numpy scalar
        return finite_or_none(value.item())
    return value


def json_text(data: Any, **options: Any) -> str:
    """json.dumps with NaN/Infinity as null; allow_nan=False makes a missed one an error, never a token."""
    return json.dumps(finite_or_none(data), allow_nan=False, **options)
