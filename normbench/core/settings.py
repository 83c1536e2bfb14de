"""Settings from the environment and numbers from the command line, each by one rule.

Details: docs/suites-and-results.md, "Results"."""

from __future__ import annotations

import math
import os

from normbench.core.errors import NormbenchError, printable


def env_setting(name: str) -> str | None:
    """The variable's value without surrounding blanks, or None when it is unset, empty or blank."""
    value = os.environ.get(name)
    if value is None or not value.strip():
        return None
    return value.strip()


def env_number(name: str, default: float, *, above: float | None = None, integer: bool = False) -> float:
    """A numeric variable (unset or empty: `default`); a value that is not a finite number above `above`
    is one line naming the variable."""
    text = env_setting(name)
    if text is None:
        return default
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or (above is not None and value <= above):
        kind = "an integer" if integer else "a number"
        bound = f" > {above:g}" if above is not None else ""
        raise NormbenchError(f"{name}={printable(text)!r}: expected {kind}{bound}")
    return value


def check_number(
    value: float,
    option: str,
    *,
    above: float | None = None,
    below: float | None = None,
    at_least: float | None = None,
    at_most: float | None = None,
) -> float:
    """`value` if it is finite and inside the bounds (above/below exclusive, at_least/at_most inclusive);
    else a NormbenchError naming the option and the range."""
    bounds = [
        f"> {above:g}" if above is not None else "",
        f">= {at_least:g}" if at_least is not None else "",
        f"< {below:g}" if below is not None else "",
        f"<= {at_most:g}" if at_most is not None else "",
    ]
    wanted = " and ".join(b for b in bounds if b)
    inside = (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and (above is None or value > above)
        and (at_least is None or value >= at_least)
        and (below is None or value < below)
        and (at_most is None or value <= at_most)
    )
    if not inside:
        raise NormbenchError(
            f"{option} {value!r}: expected a finite number" + (f" {wanted}" if wanted else "")
        )
    return value
