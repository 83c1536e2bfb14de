"""Declarative parameter specs. A bench lists its parameters once; the suite validator, the
expander (defaults) and `normbench list benches` all read the same specs."""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

REQUIRED = object()

_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
INT64 = (-(2**63), 2**63 - 1)  # integers are stored as int64 columns


@dataclass(frozen=True)
class Param:
    """One parameter a bench accepts, in `sweep` (as a list) or in `params` (as a scalar).

    check: extra rule, returns a message when the value is wrong (e.g. 'must be > 0').
    hashed_at_default: False for a parameter added after cases were stored: while it is at its default it
    stays out of the case id (`id_params`), so every case stored before it keeps its id.
    """

    type: type
    default: Any = REQUIRED
    choices: Sequence[Any] = ()
    minimum: float | None = None
    exclusive_minimum: float | None = None
    check: Callable[[Any], str | None] | None = None
    help: str = ""
    hashed_at_default: bool = True

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def coerce(self, value: Any) -> tuple[Any, str | None]:
        """Return (value, None) or (None, message). Integers are accepted where numbers are."""
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, self.type) or (self.type is int and isinstance(value, bool)):
            return None, f"{value!r} is not {_TYPE_NAMES.get(self.type, self.type.__name__)}"
        # nan passes every comparison below (nan < minimum is False): refuse non-finite values first
        if self.type is float and not math.isfinite(value):
            return None, f"{value!r} is not a finite number"
        if self.type is int and not INT64[0] <= value <= INT64[1]:
            return None, f"{value} does not fit a 64-bit integer"
        if self.type is str and "\x00" in value:
            return None, f"{value!r} contains a NUL character"
        if self.choices and value not in self.choices:
            msg = f"{value!r} is not one of {', '.join(map(str, self.choices))}"
            return None, msg + did_you_mean(str(value), [str(c) for c in self.choices])
        if self.minimum is not None and value < self.minimum:
            return None, f"{value!r} must be >= {self.minimum:g}"
        if self.exclusive_minimum is not None and value <= self.exclusive_minimum:
            return None, f"{value!r} must be > {self.exclusive_minimum:g}"
        if self.check is not None and (msg := self.check(value)):
            return None, msg
        return value, None

    def describe(self) -> str:
        parts = [self.type.__name__]
        if self.choices:
            parts.append("one of " + ", ".join(map(str, self.choices)))
        if self.minimum is not None:
            parts.append(f">= {self.minimum:g}")
        if self.exclusive_minimum is not None:
            parts.append(f"> {self.exclusive_minimum:g}")
        parts.append("required" if self.required else f"default {self.default!r}")
        return "; ".join(parts)


def id_params(specs: dict[str, Param], params: dict[str, Any]) -> dict[str, Any]:
    """The parameters a case id hashes: every one, except a `hashed_at_default=False` one at its default."""
    return {
        k: v
        for k, v in params.items()
        if k not in specs or specs[k].hashed_at_default or v != specs[k].default
    }


def did_you_mean(word: str, options: Sequence[str]) -> str:
    """' (did you mean 'x'?)' for a near miss, else ''."""
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
