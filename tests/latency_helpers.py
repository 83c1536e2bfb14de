"""Helpers shared by the latency and block tests: build a case with the bench's defaults and run it
in-process the way the runner does."""

from __future__ import annotations

from normbench.benches import RunContext, get_bench
from normbench.core.case import Case, case_id
from normbench.runner import run_one

FAST = {"samples": 3, "warmup_calls": 1, "min_sample_s": 2e-4, "min_run_s": 0.0}


def make_case(kind: str, norm: str | None, impl: str | None, **params) -> Case:
    bench = get_bench(kind)
    full = {k: spec.default for k, spec in bench.params.items() if not spec.required}
    full.update(FAST if "samples" in bench.params else {})
    full.update(params)
    return Case(kind, norm, impl, full, 0, case_id(kind, norm, impl, full))


def run(kind: str, norm: str | None, impl: str | None, **params):
    """(metrics, rows, status, error): metrics maps metric -> value for rows without a tensor label;
    rows keeps every row."""
    rows, status, error = run_one(make_case(kind, norm, impl, **params), RunContext(threads=1))
    metrics = {r["metric"]: r["value"] for r in rows if "tensor" not in r and r.get("sample") is None}
    return metrics, rows, status, error


def per_tensor(rows, metric: str) -> dict:
    return {r["tensor"]: r["value"] for r in rows if r["metric"] == metric and "tensor" in r}
