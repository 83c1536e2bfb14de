"""A case: one bench kind, one norm implementation and one set of resolved parameters; the unit the suite
expands into, the runner runs, a bench measures and the store keys its rows on.

A case's id is a hash of everything that defines it (kind, norm, impl, every resolved parameter, and what the
bench adds through `Bench.identity`, e.g. the SHA-256 of the training text), so the same case has the same id
in any suite file, in any order: that is what --resume and compare key on."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from normbench.core.renames import first_spelling


@dataclass(frozen=True)
class Case:
    kind: str
    norm: str | None
    impl: str | None
    params: dict[str, Any]
    bench_index: int
    case_id: str
    swept: tuple[str, ...] = ()  # the parameters the suite sweeps, shown in short labels
    timeout_s: float | None = None  # a limit, not part of the case's identity (not in case_id)
    # parameters added after cases were stored, at their default: out of the id and the label, so a case
    # reads and selects as it did before they existed (core/params.py, hashed_at_default)
    unhashed: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """Every parameter (but `unhashed`): what --only matches against."""
        shown = (f"{k}={v}" for k, v in self.params.items() if k not in self.unhashed)
        return self._head() + " " + " ".join(shown)

    @property
    def short_label(self) -> str:
        """The swept parameters only: what progress output shows."""
        return self._head() + " " + " ".join(f"{k}={self.params[k]}" for k in self.swept)

    def _head(self) -> str:
        return " ".join(filter(None, [self.kind, f"{self.norm}:{self.impl}" if self.norm else None]))


def case_id(
    kind: str, norm: str | None, impl: str | None, params: dict[str, Any], identity: dict | None = None
) -> str:
    # a parameter renamed, or a case moved to another kind, later is hashed as first spelled
    # (core/renames.py): ids never change
    first_kind, first_params = first_spelling(kind, params)
    fields = {"kind": first_kind, "norm": norm, "impl": impl, "params": first_params}
    if identity:  # only when a bench adds something, so every other case keeps its id
        fields["identity"] = identity
    blob = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]
