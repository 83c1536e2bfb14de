"""Robust statistics over processes, a run's and `ab`'s unit of variation: a case's value is the median of its
per-process values, its scale their MAD, its interval the studentized median (median ± c_k · MAD / √k on
logs) with c_k simulated under normality, so one far-off process moves none of them. Why and what it covers:
docs/methodology.md, "Intervals over processes"."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

MAD_NORMAL = 1.4826  # 1 / Φ⁻¹(3/4): the MAD of a normal sample estimates σ / 1.4826
SIM_DRAWS = 200_000  # simulated samples per k: the 95% critical value to about 1%
SIM_SEED = 20261204
MAX_K = 1000  # beyond this, c_k is its limit (the median's standard error times the normal quantile)


def mad_scale(values: Sequence[float]) -> float:
    """1.4826 × the median absolute deviation from the median: σ for normal data, unmoved by one outlier.
    NaN for fewer than 2 values."""
    xs = np.asarray(values, dtype=float)
    if xs.size < 2:
        return math.nan
    return float(MAD_NORMAL * np.median(np.abs(xs - np.median(xs))))


@cache
def critical_value(k: int, level: float = 0.95) -> float:
    """c_k: P(|median(X)| ≤ c_k · MAD_scale(X) / √k) = level for k i.i.d. normal X (simulated, seeded)."""
    if k < 2:
        raise ValueError(f"a studentized median needs at least 2 values, not {k}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), not {level}")
    if k > MAX_K:  # asymptotically the median is normal with standard error √(π/2) σ / √k
        return _normal_quantile((1 + level) / 2) * math.sqrt(math.pi / 2)
    return simulated_quantile(_studentized_median, k, level=level, seed=SIM_SEED + k)


def mad_rows(x):
    """mad_scale of each row of a 2-D array (the simulations' form)."""
    return MAD_NORMAL * np.median(np.abs(x - np.median(x, axis=1, keepdims=True)), axis=1)


def _studentized_median(x):
    return np.abs(np.median(x, axis=1)) / (mad_rows(x) / math.sqrt(x.shape[1]))


def simulated_quantile(statistic, k: int, *, groups: int = 1, level: float = 0.95, seed: int) -> float:
    """The `level`-quantile of statistic(*samples) over SIM_DRAWS simulations, each of `groups` samples of k
    standard normal values (arrays of shape (n, k), one row per simulation); seeded, in chunks of bounded
    memory. The critical values of every statistic over processes come from here."""
    rng = np.random.default_rng(seed)
    stats, left = [], SIM_DRAWS
    chunk = max(1, 2_000_000 // (k * groups))
    while left:
        n = min(chunk, left)
        samples = [rng.standard_normal((n, k)) for _ in range(groups)]
        with np.errstate(divide="ignore", invalid="ignore"):
            stats.append(statistic(*samples))
        left -= n
    return float(np.quantile(np.concatenate(stats), level))


def _normal_quantile(p: float) -> float:
    """Φ⁻¹(p) by bisection on erf (plain Python; only needed past MAX_K)."""
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if 0.5 * (1 + math.erf(mid / math.sqrt(2))) < p else (lo, mid)
    return (lo + hi) / 2


@dataclass(frozen=True)
class ProcessInterval:
    """A positive quantity (a time or a ratio) estimated over k processes: the median of the per-process
    values and its studentized-median interval, computed on logs (ratios are symmetric there)."""

    estimate: float
    lo: float  # NaN bounds when k < 2: one process says nothing about the next
    hi: float
    k: int
    log_scale: float  # MAD scale of the per-process log values (NaN when k < 2)

    @property
    def spread(self) -> float:
        """×/÷ half-width: hi / estimate (NaN without an interval)."""
        return self.hi / self.estimate if self.estimate > 0 else math.nan


def over_processes(values: Sequence[float], level: float = 0.95) -> ProcessInterval:
    """The median of positive per-process values and its interval at `level` over processes.
    Non-finite or non-positive values are dropped (a process that failed a case says nothing of its time)."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v)) and float(v) > 0]
    k = len(xs)
    if k == 0:
        return ProcessInterval(math.nan, math.nan, math.nan, 0, math.nan)
    logs = np.log(np.asarray(xs))
    centre = float(np.median(logs))
    if k < 2:
        return ProcessInterval(math.exp(centre), math.nan, math.nan, k, math.nan)
    scale = mad_scale(logs)
    half = critical_value(k, level) * scale / math.sqrt(k)
    return ProcessInterval(math.exp(centre), math.exp(centre - half), math.exp(centre + half), k, scale)


def median_standard_error(logs: Sequence[float]) -> float:
    """The standard error of the median of these values, robustly: √(π/2) · MAD scale / √k (the median's
    asymptotic efficiency at the normal, with a scale that one outlier does not move)."""
    k = len(logs)
    if k < 2:
        return math.inf
    return math.sqrt(math.pi / 2) * mad_scale(logs) / math.sqrt(k)
