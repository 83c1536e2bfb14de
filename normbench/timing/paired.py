"""Paired ratios: what two callables timed in the same rounds (timing.measure_interleaved) say about each
other. The machine's own speed moves in phases of seconds to minutes on a shared machine; a round lasts
milliseconds, so within a round both callables see the same phase and their ratio cancels it. The ratio
of each round, then the median over rounds, is the technique of randomized multiple interleaved trials
(Abedi & Brecht, ICPE 2017) and of duet benchmarking (Bulej et al., ICPE 2020). The measurements behind it
are in docs/methodology.md, "Paired rounds"."""

from __future__ import annotations

import math
from statistics import median

CI_LEVEL = 0.95


def round_values(samples) -> list[float]:
    """One value per round: the median of the samples the round took (extra["round_sizes"]; one round
    of all samples where it is missing)."""
    sizes = samples.extra.get("round_sizes") or [len(samples.times)]
    out, start = [], 0
    for size in sizes:
        if size:
            out.append(median(samples.times[start : start + size]))
        start += size
    return out


def paired_ratios(a, b) -> list[float]:
    """a's time over b's, round by round (a and b from the same measure_interleaved call)."""
    va, vb = round_values(a), round_values(b)
    if len(va) != len(vb):
        raise ValueError(f"{len(va)} rounds against {len(vb)}: not timed in the same rounds")
    return [x / y for x, y in zip(va, vb, strict=True) if y > 0]


def median_interval(values, level: float = CI_LEVEL) -> tuple[float, float, float]:
    """(median, lo, hi): the median and its distribution-free confidence interval from order statistics
    (the sign-test interval: P(X(k) <= median <= X(n+1-k)) >= level with X(k) the k-th smallest and k the
    largest rank whose two binomial(n, 1/2) tails stay within 1 - level). NaN bounds below 6 values, where
    no such k exists at 95%."""
    xs = sorted(float(v) for v in values)
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, math.nan
    mid = median(xs)
    k = _order_rank(n, level)
    if k == 0:
        return mid, math.nan, math.nan
    return mid, xs[k - 1], xs[n - k]


def _order_rank(n: int, level: float) -> int:
    """The largest k >= 1 with 2 * P(Binomial(n, 1/2) <= k - 1) <= 1 - level; 0 when there is none."""
    alpha, tail, k = 1 - level, 0.0, 0
    for j in range(n):
        tail += math.comb(n, j) / 2**n  # P(B <= j)
        if 2 * tail > alpha:
            break
        k = j + 1
    return min(k, n // 2)
