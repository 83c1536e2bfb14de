"""Expansion of validated bench tables into cases: (norm, impl) x the cartesian product of the sweep.
A case and its id are core vocabulary (core/case.py)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from normbench.benches import get_bench
from normbench.core.case import Case, case_id
from normbench.core.params import id_params
from normbench.suite.spec import BenchSpec, Suite


def expand_bench(spec: BenchSpec) -> Iterator[Case]:
    bench = get_bench(spec.kind)
    keys = list(spec.sweep)
    for norm, impl in spec.norm_impls:
        for values in itertools.product(*(spec.sweep[k] for k in keys)):
            params = dict(zip(keys, values, strict=True))
            params.update({k: v for k, v in spec.params.items() if k not in params})
            hashed = id_params(bench.params, params)
            cid = case_id(spec.kind, norm, impl, hashed, bench.identity(params))
            unhashed = tuple(k for k in params if k not in hashed)
            yield Case(spec.kind, norm, impl, params, spec.index, cid, tuple(keys), spec.timeout_s, unhashed)


def spec_cases(spec: BenchSpec) -> list[Case]:
    """The cases of one bench table: those validation expanded, else (a spec built by hand) expanded now."""
    return spec.cases if spec.cases is not None else list(expand_bench(spec))


def expand(suite: Suite) -> list[Case]:
    """Every case of a suite, in order. Free for a parsed suite: validation expanded each table once."""
    return [case for spec in suite.benches for case in spec_cases(spec)]


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
