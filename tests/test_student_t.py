"""Student's t quantile in plain Python agrees with scipy's to 1e-11 across the degrees of freedom and
(Bonferroni) levels the claims use."""

from __future__ import annotations

import itertools

import pytest

from normbench.core.student_t import t_cdf, t_quantile


def test_t_quantile_agrees_with_scipy():
    stats = pytest.importorskip("scipy.stats")
    levels = [0.5, 0.9, 0.975, 0.99, 1 - 0.025 / 7, 1 - 0.025 / 40, 0.025]
    for df, p in itertools.product([1, 2, 3, 4, 7, 19, 99, 1000, 2.5], levels):
        assert t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-11, abs=1e-12), (p, df)
        assert t_cdf(t_quantile(p, df), df) == pytest.approx(p, rel=1e-12)


def test_t_quantile_refuses_what_has_no_quantile():
    for p, df in ((0.0, 3), (1.0, 3), (0.5, 0)):
        with pytest.raises(ValueError):
            t_quantile(p, df)
