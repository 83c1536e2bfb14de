"""Small stored runs for the compare, baseline and CI-gate tests: a few cases of three bench kinds with known
values, written through the run store (no benchmark runs)."""

from __future__ import annotations

from pathlib import Path

from _stores import create_store

from normbench.core.case import Case, case_id
from normbench.results.store import RunStore

ENV = {
    "hostname": "runner-a",
    "cpu": "AMD EPYC 7763",
    "cpu_count": 2,
    "cpu_flags": ["avx2", "avx512f"],
    "torch": "2.13.0",
    "torch_threads": 1,
    "python": "3.11.9",
}
JACOBIAN = [
    # (norm, d, mean, rel_err per input): signed (measured - closed) / closed, fp64
    ("layernorm", 64, 0.0, [2.1e-16, -1.3e-16]),
    ("layernorm", 64, 3.0, [4.4e-16, 3.1e-16]),
    ("rmsnorm", 64, 0.0, [-1.1e-16, 0.0]),
]
LOSSES = {0: 2.871, 1: 2.902, 2: 2.855}  # final_loss per seed of one stability case
LATENCY_IMPLS = [f"i{k}" for k in range(10)]


def store_run(
    root: Path,
    run_id: str,
    *,
    env: dict | None = None,
    load: float | None = None,
    rel_err: dict[tuple[str, float], list[float]] | None = None,
    latency: dict[str, float] | None = None,
    jitter: float = 0.0,
    extra_jacobian: bool = False,
    suite: str = "gate",
    overrides: list[str] | None = None,
) -> RunStore:
    """Jacobian rel_err rows (deterministic), one stability case over three seeds (final_loss, deterministic)
    and, when `latency` maps impl -> median, latency cases of 12 tight raw samples (timing) with their paired
    ratios to a 10 µs reference (time_vs_ref). `load`: the
    1-minute load average stored with every case; `jitter`: this run's medians move by it (run to run)."""
    manifest = {"run_id": run_id, "started": run_id, "env": env or ENV, "suite": suite}
    store = create_store(root, {**manifest, **({"overrides": overrides} if overrides else {})})

    def write(kind, norm, impl, params, rows):
        if load is not None:
            rows.append({"metric": "loadavg_1m", "unit": "processes", "value": load})
        case = Case(kind, norm, impl, params, 0, case_id(kind, norm, impl, params))
        store.write_case(case, rows, "ok", None)

    cases = list(JACOBIAN) + ([("rmsnorm", 64, 3.0, [1.0e-16, 2.0e-16])] if extra_jacobian else [])
    for norm, d, mean, errors in cases:
        values = (rel_err or {}).get((norm, mean), errors)
        params = {"d": d, "mean": mean, "dtype": "fp64", "method": "exact", "inputs": len(values)}
        rows = [{"metric": "rel_err", "unit": "ratio", "value": v, "sample": i} for i, v in enumerate(values)]
        write("jacobian", norm, "module", params, rows)
    for seed, loss in LOSSES.items():
        params = {"placement": "pre", "depth": 2, "steps": 40, "seed": seed}
        write(
            "stability",
            "layernorm",
            "module",
            params,
            [{"metric": "final_loss", "unit": "nats", "value": loss}],
        )
    for k, (impl, median) in enumerate((latency or {}).items()):
        params = {"tokens": 64, "d": 256, "dtype": "fp32", "mode": "fwd", "device": "cpu"}
        shift = 1 + jitter * (1 if k % 2 else -1)  # this run's state moves half the cases up, half down
        times = [median * shift * (1 + (i - 5.5) / 400) for i in range(12)]
        rows = [{"metric": "time", "unit": "s", "value": t, "sample": i} for i, t in enumerate(times)]
        # the paired ratio to a 10 µs reference timed in the same rounds (what compare gates by default)
        rows += [
            {"metric": "time_vs_ref", "unit": "ratio", "value": t / 1e-5, "sample": i}
            for i, t in enumerate(times)
        ]
        write("latency", "layernorm", impl, params, rows)
    return store
