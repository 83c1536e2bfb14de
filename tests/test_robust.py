"""Proves the over-process statistics: the MAD scale ignores one outlier, the studentized-median interval
covers the true median at its level for normal data, and one far-off process barely moves it."""

import math

import numpy as np
import pytest

from normbench.core.robust import critical_value, mad_scale, median_standard_error, over_processes


def test_mad_scale_estimates_sigma_and_ignores_one_outlier():
    rng = np.random.default_rng(0)
    x = rng.normal(0, 2.0, 20_000)
    assert mad_scale(x) == pytest.approx(2.0, rel=0.03)
    assert mad_scale([1.0, 1.01, 0.99, 1.0, 5.0]) == pytest.approx(
        mad_scale([1.0, 1.01, 0.99, 1.0, 1.02]), rel=0.01
    )
    assert math.isnan(mad_scale([1.0]))


def test_critical_value_is_deterministic_and_shrinks_with_k():
    assert critical_value(5) == critical_value(5)
    assert critical_value(20) < critical_value(8) < critical_value(5)
    # the limit: the normal quantile times the median's efficiency factor
    assert critical_value(2000) == pytest.approx(1.95996 * math.sqrt(math.pi / 2), rel=1e-3)
    with pytest.raises(ValueError):
        critical_value(1)


@pytest.mark.parametrize("k", [5, 8])
def test_interval_covers_at_its_level_for_normal_logs(k):
    rng = np.random.default_rng(k)
    hits, trials = 0, 3000
    for _ in range(trials):
        values = np.exp(rng.normal(0.2, 0.05, k))
        iv = over_processes(values)
        hits += iv.lo <= math.exp(0.2) <= iv.hi
    assert 0.93 <= hits / trials <= 0.97  # 95% ± 2 binomial standard errors at 3000 trials, and some slack


def test_one_outlier_process_barely_moves_the_interval():
    calm = [1.00, 1.01, 0.99, 1.02, 0.98, 1.00]
    wild = [1.00, 1.01, 0.99, 1.02, 0.98, 2.16]
    a, b = over_processes(calm), over_processes(wild)
    assert b.estimate == pytest.approx(a.estimate, rel=0.01)
    assert b.spread < 1.05


def test_degenerate_inputs():
    one = over_processes([1.3])
    assert one.estimate == 1.3 and math.isnan(one.lo) and one.k == 1
    none = over_processes([math.nan, -1.0, None])
    assert none.k == 0 and math.isnan(none.estimate)
    assert median_standard_error([0.1]) == math.inf
