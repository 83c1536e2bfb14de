"""How much one run's median moves from run to run, estimated from the comparison itself: the gate every
timing change must clear, and the smallest change two runs can tell apart (the noise floor)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np


def z_score(alpha: float) -> float:
    from scipy.stats import norm

    return float(norm.isf(alpha / 2))


MIN_CASES = 8  # cases (or per-case run pairs) below which no run-to-run noise is estimated


@dataclass
class Noise:
    sigma: float  # the spread of one run's median, in log units
    floor: float  # the smallest ratio that can be told from it with the runs given
    note: str
    label: str = ""  # kind/metric, with the rows' noise class where it has one


def run_to_run_noise(judged, kind: str, metric: str, alpha: float) -> Noise | None:
    """The spread of one run's median around another's, in log units (σ of a single run).

    Samples inside one run share that process's state (memory placement, frequency, a neighbour's burst), so
    the Mann-Whitney test alone calls run-to-run noise significant. With several runs per side, σ is the
    pooled spread of their medians. With one run per side it is estimated from all the cases at once, most of
    which did not change (an empirical null: 1.4826·MAD of the log ratios / √2). Fewer than 8 cases: no gate."""
    usable = [(r, b, n) for r, b, n in judged if r.judged_ratio and 0 < r.judged_ratio < float("inf")]
    multi = [
        np.std(np.log(b), ddof=1) ** 2 + np.std(np.log(n), ddof=1) ** 2
        for _, b, n in usable
        if len(b) >= 2 and len(n) >= 2 and min(b + n) > 0
    ]
    if len(multi) >= MIN_CASES:
        sigma, how = float(np.sqrt(np.mean(multi) / 2)), "pooled variance of the run medians given per side"
    elif len(usable) >= MIN_CASES:
        logs = np.log([r.judged_ratio for r, _, _ in usable])
        sigma = float(1.4826 * np.median(np.abs(logs - np.median(logs))) / np.sqrt(2))
        how = f"1.4826·MAD of the log ratios of {len(usable)} cases (most assumed unchanged)"
    else:
        return None
    if sigma == 0:
        return None
    nb, nn = (int(np.median([len(x[i]) for x in usable])) for i in (1, 2))
    floor = math.exp(sigma * math.sqrt(1 / nb + 1 / nn) * z_score(alpha))
    note = (
        f"{kind}/{metric}: run-to-run noise σ = {sigma:.1%} per run ({how}); with {nb} vs {nn} run(s), "
        f"changes below {floor:.2f}× cannot be told from it"
    )
    if nb == 1 or nn == 1:
        note += "; pass several runs per side (A,B,C) to see smaller ones"
    return Noise(sigma, floor, note, f"{kind}/{metric}")


def smallest_p(a: list[float], b: list[float]) -> float:
    """The smallest two-sided p a Mann-Whitney U test can give for samples of these sizes, by the method
    scipy uses for them (exact for small samples without ties, else the normal approximation): two fully
    separated samples. 5 vs 5 cannot go below 2/252 ≈ 0.0079, so at alpha 0.002 such a test never flags."""
    ties = len(set(a) | set(b)) < len(a) + len(b)
    return _smallest_p(len(a), len(b), "asymptotic" if ties else "auto")


@functools.lru_cache(maxsize=256)
def _smallest_p(n_a: int, n_b: int, method: str) -> float:
    from scipy.stats import mannwhitneyu

    low, high = list(range(n_a)), list(range(n_a, n_a + n_b))
    return float(mannwhitneyu(low, high, alternative="two-sided", method=method).pvalue)


def samples_to_reach(alpha: float) -> int:
    """The fewest samples per side (equal sizes, no ties) whose test can reach p < alpha."""
    n = 3
    while _smallest_p(n, n, "auto") >= alpha and n < 10_000:
        n += 1
    return n
