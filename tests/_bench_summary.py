"""pytest hooks for `make bench-compare`: pytest-benchmark raises PerformanceRegression from its table display
(a traceback, make exit 2); these report the regressions as one line and set exit status 1 instead."""

from __future__ import annotations

import re

import pytest

_SESSION: list = []


def pytest_sessionstart(session):
    _SESSION[:] = [session]


@pytest.hookimpl(wrapper=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """pytest-benchmark raises PerformanceRegression from its table display (a traceback, exit 2 under make).
    Its regressions are taken before it looks, and reported here as one line, with exit status 1."""
    bench = getattr(config, "_benchmarksession", None)
    regressions = list(getattr(bench, "performance_regressions", None) or [])
    if bench is not None:
        bench.performance_regressions = []
    result = yield
    if bench is not None and bench.compare_fail and bench.compared_mapping:
        terminalreporter.write_line(bench_compare_line(regressions, len(bench.benchmarks), config))
        if regressions and _SESSION:
            _SESSION[0].exitstatus = pytest.ExitCode.TESTS_FAILED
    return result


def bench_compare_line(regressions: list[tuple[str, str]], compared: int, config) -> str:
    """'bench-compare: FAIL 2/16 slower than the saved run (median:25%): name (median +41.0%), ...' or OK 0/16."""
    checks = config.getoption("benchmark_compare_fail") or []
    rule = ",".join(
        f"{c.field}:{c.threshold}{'%' if 'Percentage' in type(c).__name__ else 's'}" for c in checks
    )
    worst: dict[str, str] = {}
    for name, text in regressions:  # "Field 'median' has failed PercentageRegressionCheck: 41.0 > 25.0"
        field = text.split("'")[1] if text.count("'") >= 2 else "?"
        value = text.rsplit(":", 1)[-1].split(">")[0].strip()
        unit = "%" if "Percentage" in text else " s"
        name = re.sub(r" \(\d{4}_[^)]*\)$", "", name)  # the saved run's id, which pytest-benchmark said above
        worst.setdefault(name, f"{name} ({field} +{float(value):.1f}{unit})")
    verdict = "FAIL" if regressions else "OK"
    names = (": " + ", ".join(worst.values())) if worst else ""
    return f"bench-compare: {verdict} {len(worst)}/{compared} slower than the saved run ({rule}){names}"
