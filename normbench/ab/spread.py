"""A case's A/A spread S in `normbench ab`: how far the median of k per-process ratios moves when nothing
changed, from a robust scale (one far-off process moves neither the median nor the MAD) and a critical value
simulated for exactly this statistic, so that ×/÷ S covers 95% of reruns when the per-process log ratios are
normal. Why the MAD and not the variance, and what was measured: docs/ci.md, "The A/A spread"."""

from __future__ import annotations

import math
from functools import cache
from statistics import median

import numpy as np

from normbench.core.robust import mad_rows, median_standard_error, simulated_quantile

LEVEL = 0.95
SIM_SEED = 20261205


def case_spread(ab: list[float], aa: list[float]) -> float:
    """S >= 1 from k per-process ratios head/base (`ab`) and head'/head (`aa`): the standard error of their
    median from the pooled MAD scales of both (core/robust.py: √(π/2) · MAD scale / √k), times c_k
    (pooled_critical_value); or the A/A's own offset if that is larger (two builds of the same code that
    differ are this case's bias, not noise that averages out). ∞ below 2 processes."""
    k = len(ab)
    if k < 2 or len(aa) < 2:
        return math.inf
    se_ab = median_standard_error([math.log(v) for v in ab])
    se_aa = median_standard_error([math.log(v) for v in aa])
    se = math.sqrt((se_ab**2 + se_aa**2) / 2)
    offset = abs(math.log(median(aa)))
    return math.exp(max(pooled_critical_value(k) * se, offset))


@cache
def pooled_critical_value(k: int) -> float:
    """c_k: P(|median(X)| ≤ c_k · se) = LEVEL, for X and Y each k i.i.d. standard normal values and se the
    pooled standard error above (simulated with a fixed seed: the same k always gives the same value)."""
    if k < 2:
        raise ValueError(f"a spread over processes needs at least 2 of them, not {k}")
    return simulated_quantile(_pooled_statistic, k, groups=2, level=LEVEL, seed=SIM_SEED + k)


def _pooled_statistic(x, y):
    k = x.shape[1]
    se = np.sqrt(math.pi / 2 * (mad_rows(x) ** 2 + mad_rows(y) ** 2) / 2 / k)
    return np.abs(np.median(x, axis=1)) / se
