"""pytest-benchmark micro-benchmarks (marked `bench`, run by `make bench`, not `make test`): every
default norm implementation at a CI-sized shape, and normbench's own hot paths (also marked `harness`: timed,
never gated by `make bench-compare`), on one thread."""

from __future__ import annotations

import os

import pytest
from _stores import create_store

pytestmark = pytest.mark.bench

SHAPE = (256, 512)  # tokens x hidden: big enough to be kernel-bound, small enough for CI


def _planted_slowdown() -> int:
    """NORMBENCH_BENCH_SLOWDOWN=k makes every benchmark call its target k times: the planted regression that
    scripts/experiments/bench_gate.py checks `make bench-compare` catches. Unset (1) in every ordinary run."""
    text = os.environ.get("NORMBENCH_BENCH_SLOWDOWN", "1")
    if not text.isdigit() or int(text) < 1:
        raise pytest.UsageError(f"NORMBENCH_BENCH_SLOWDOWN={text!r}: a whole number >= 1")
    return int(text)


SLOWDOWN = _planted_slowdown()


def slowed(fn):
    """fn itself, or with a planted slowdown a function that calls it SLOWDOWN times."""
    if SLOWDOWN == 1:
        return fn

    def repeated(*args, **kwargs):
        for _ in range(SLOWDOWN - 1):
            fn(*args, **kwargs)
        return fn(*args, **kwargs)

    return repeated


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One intra-op thread: a pool of several threads on a shared CI core spins and waits on the others
    (a 51 µs BatchNorm measured 32 ms), which is load, not the code."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _norm_impls():
    """The implementations a suite runs when it names only the norm (ImplInfo.default): those that cost
    seconds to set up (torch.compile) or need optional kernels are declared default=False by their norm."""
    from normbench.norms import all_norms

    return [
        (n.name, i)
        for n in all_norms().values()
        for i, info in n.impls.items()
        if info.default and info.missing_requirement() is None
    ]


@pytest.mark.parametrize(("norm", "impl"), _norm_impls(), ids=lambda v: str(v))
def test_norm_forward(benchmark, norm, impl):
    import torch

    from normbench.norms import get_norm

    torch.manual_seed(0)
    x = torch.randn(*SHAPE)
    built = get_norm(norm).build(impl, SHAPE[1], eps=1e-5, dtype=torch.float32, device="cpu")
    if getattr(
        built.fn, "is_compiled", False
    ):  # a plugin's default impl that compiles: not a micro-benchmark
        pytest.skip(f"{norm}:{impl} is torch.compile'd")
    with torch.inference_mode():
        y = benchmark(slowed(built.fn), x)
    assert y.shape == x.shape and bool(torch.isfinite(y).all())


@pytest.mark.harness
def test_expand_latency_suite(benchmark):
    from normbench.suite.expand import expand
    from normbench.suite.load import load_suite

    cases = benchmark(slowed(lambda: expand(load_suite("suites/quick.toml"))))
    assert cases


@pytest.mark.harness
def test_write_case(benchmark, tmp_path):
    from normbench.core.case import Case

    store = create_store(tmp_path, {"run_id": "bench", "started": ""})
    rows = [{"metric": "time", "unit": "s", "value": 1e-6 * i, "sample": i} for i in range(100)]
    case = Case("latency", "layernorm", "module", {"tokens": 8, "d": 8}, 0, "c0")
    path = benchmark(slowed(store.write_case), case, rows, "ok", None)
    assert path.exists()


@pytest.mark.harness
def test_build_report(benchmark, tmp_path):
    from normbench.analysis.report import build_tables
    from normbench.core.case import Case

    store = create_store(tmp_path, {"run_id": "bench", "started": "", "env": {}})
    for k, hidden in enumerate([256, 512, 1024, 2048]):
        for impl in ("module", "functional"):
            params = {"tokens": 64, "d": hidden, "dtype": "fp32", "mode": "fwd", "device": "cpu"}
            rows = [
                {"metric": "time", "unit": "s", "value": 1e-5 * (1 + i / 10), "sample": i} for i in range(10)
            ]
            rows += [{"metric": m, "unit": "s", "value": 1e-5} for m in ("time_median", "time_iqr")]
            rows += [{"metric": "gbps", "unit": "GB/s", "value": 10.0}]
            store.write_case(Case("latency", "layernorm", impl, params, 0, f"c{k}{impl}"), rows, "ok", None)
    frame = store.read()
    tables = benchmark(slowed(build_tables), frame, [store.manifest])
    assert tables and not tables[0].frame.empty
