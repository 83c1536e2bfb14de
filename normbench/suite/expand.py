"""Expansion of validated bench tables into cases: (norm, impl) x the cartesian product of the sweep.

A case's id is a hash of everything that defines it (kind, norm, impl, every resolved parameter, and what the
bench adds through `Bench.identity`, e.g. the SHA-256 of the training text), so the same case has the same id
in any suite file, in any order: that is what --resume and compare key on."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from normbench.suite.load import BenchSpec, Suite


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

    @property
    def label(self) -> str:
        """Every parameter: what --only matches against."""
        return self._head() + " " + " ".join(f"{k}={v}" for k, v in self.params.items())

    @property
    def short_label(self) -> str:
        """The swept parameters only: what progress output shows."""
        return self._head() + " " + " ".join(f"{k}={self.params[k]}" for k in self.swept)

    def _head(self) -> str:
        return " ".join(filter(None, [self.kind, f"{self.norm}:{self.impl}" if self.norm else None]))


def case_id(
    kind: str, norm: str | None, impl: str | None, params: dict[str, Any], identity: dict | None = None
) -> str:
    fields = {"kind": kind, "norm": norm, "impl": impl, "params": params}
    if identity:  # only when a bench adds something, so every other case keeps its id
        fields["identity"] = identity
    blob = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def expand_bench(spec: BenchSpec) -> Iterator[Case]:
    from normbench.benches import get_bench

    bench = get_bench(spec.kind)
    keys = list(spec.sweep)
    for norm, impl in spec.norm_impls:
        for values in itertools.product(*(spec.sweep[k] for k in keys)):
            params = dict(zip(keys, values, strict=True))
            params.update({k: v for k, v in spec.params.items() if k not in params})
            cid = case_id(spec.kind, norm, impl, params, bench.identity(params))
            yield Case(spec.kind, norm, impl, params, spec.index, cid, tuple(keys), spec.timeout_s)


def expand(suite: Suite) -> list[Case]:
    return [case for spec in suite.benches for case in expand_bench(spec)]


def select(
    cases: list[Case], only: list[str] | None = None, shard: tuple[int, int] | None = None
) -> list[Case]:
    """--only: keep cases whose label matches any pattern (glob if it has * ? [, else substring).
    --shard i/N: keep every N-th case starting at i (1-based), a deterministic slice of the full list."""
    import fnmatch

    if shard is not None:
        i, n = shard
        cases = [c for k, c in enumerate(cases) if k % n == i - 1]
    if only:

        def matches(c: Case, p: str) -> bool:
            # A glob matches anywhere in the label, like a substring: '*:composite' must find
            # 'rmsnorm:composite tokens=...' although parameters follow the impl.
            return fnmatch.fnmatch(c.label, "*" + p + "*") if any(ch in p for ch in "*?[") else p in c.label

        cases = [c for c in cases if any(matches(c, p) for p in only)]
    return cases
