"""Summary statistics of raw samples: the median and the 20th/80th percentiles (as Liger reports), the
interquartile range, and the spread flag torch.utils.benchmark uses (IQR > 10% of the median)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

HIGH_SPREAD = 0.10  # IQR / median above this is marked in tables


def summarize(samples: Sequence[float]) -> dict[str, float]:
    a = np.asarray(samples, dtype=float)
    p20, q1, med, q3, p80 = np.percentile(a, [20, 25, 50, 75, 80])
    return {
        "median": float(med),
        "p20": float(p20),
        "p80": float(p80),
        "iqr": float(q3 - q1),
        "mean": float(a.mean()),
        "std": float(a.std(ddof=1)) if a.size > 1 else 0.0,
        "min": float(a.min()),
        "max": float(a.max()),
        "n": float(a.size),
    }


def high_spread(median: float, iqr: float) -> bool:
    return median > 0 and iqr / median > HIGH_SPREAD
