"""pytest-benchmark micro-benchmarks (marked `bench`, run by `make bench`, not `make test`): every
registered norm implementation at a CI-sized shape, and normbench's own hot paths."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.bench

SHAPE = (256, 512)  # tokens x hidden: big enough to be kernel-bound, small enough for CI


def _norm_impls():
    from normbench.norms import all_norms

    return [
        (n.name, i)
        for n in all_norms().values()
        for i, info in n.impls.items()
        if info.missing_requirement() is None and not i.startswith("compile")
    ]


@pytest.mark.parametrize(("norm", "impl"), _norm_impls(), ids=lambda v: str(v))
def test_norm_forward(benchmark, norm, impl):
    import torch

    from normbench.norms import get_norm

    torch.manual_seed(0)
    x = torch.randn(*SHAPE)
    built = get_norm(norm).build(impl, SHAPE[1], eps=1e-5, dtype=torch.float32, device="cpu")
    with torch.inference_mode():
        y = benchmark(built.fn, x)
    assert y.shape == x.shape and bool(torch.isfinite(y).all())


def test_expand_latency_suite(benchmark):
    from normbench.suite.expand import expand
    from normbench.suite.load import load_suite

    cases = benchmark(lambda: expand(load_suite("suites/quick.toml")))
    assert cases


def test_write_case(benchmark, tmp_path):
    from normbench.core.case import Case
    from normbench.results.store import RunStore

    store = RunStore.create(tmp_path, {"run_id": "bench", "started": ""})
    rows = [{"metric": "time", "unit": "s", "value": 1e-6 * i, "sample": i} for i in range(100)]
    case = Case("latency", "layernorm", "module", {"tokens": 8, "hidden": 8}, 0, "c0")
    path = benchmark(store.write_case, case, rows, "ok", None)
    assert path.exists()


def test_build_report(benchmark, tmp_path):
    from normbench.analysis.report import build_tables
    from normbench.core.case import Case
    from normbench.results.store import RunStore

    store = RunStore.create(tmp_path, {"run_id": "bench", "started": "", "env": {}})
    for k, hidden in enumerate([256, 512, 1024, 2048]):
        for impl in ("module", "functional"):
            params = {"tokens": 64, "hidden": hidden, "dtype": "fp32", "mode": "fwd", "device": "cpu"}
            rows = [
                {"metric": "time", "unit": "s", "value": 1e-5 * (1 + i / 10), "sample": i} for i in range(10)
            ]
            rows += [{"metric": m, "unit": "s", "value": 1e-5} for m in ("time_median", "time_iqr")]
            rows += [{"metric": "gbps", "unit": "GB/s", "value": 10.0}]
            store.write_case(Case("latency", "layernorm", impl, params, 0, f"c{k}{impl}"), rows, "ok", None)
    frame = store.read()
    tables = benchmark(build_tables, frame, [store.manifest])
    assert tables and not tables[0].frame.empty
