"""What a compared row's values say before and beside the test: the medians (NaN left out), values that are
not finite (a regression when only the new run has them, nothing to compare when the base does), the
Mann-Whitney p of every tested row (batched), and the cases whose test cannot reach --alpha at their sample
sizes (undetectable, never a pass)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from normbench.analysis.compare.groups import MetricGroup
from normbench.analysis.compare.noise import samples_to_reach
from normbench.analysis.rows import CompareRow


@dataclass
class Untestable:
    """The judged rows of one metric whose test cannot reach --alpha at their sample sizes."""

    sizes: dict[tuple[int, int], float] = field(default_factory=dict)  # (n base, n new) -> smallest p
    rows: int = 0
    undetectable_rows: int = 0  # of them, changed beyond --factor the bad way: marked x

    def add(self, test: tuple[int, int, float], *, undetectable: bool) -> None:
        self.sizes[test[:2]] = test[2]
        self.rows += 1
        self.undetectable_rows += undetectable

    def _sizes(self) -> str:
        return ", ".join(f"n={a} vs {b}: smallest p {p:.2g}" for (a, b), p in sorted(self.sizes.items()))

    def notes(self, kind: str, metric: str, alpha: float) -> list[str]:
        if not self.rows:
            return []
        return [
            f"{kind}/{metric}: {self.rows} case(s) have too few samples for a Mann-Whitney test to reach "
            f"p < {alpha:g} ({self._sizes()}); a change beyond --factor in them is undetectable (exit 3), "
            f"never a pass: {samples_to_reach(alpha)} samples per side can reach it"
        ]

    def undetectable(self, kind: str, metric: str, opts) -> list[str]:
        """Why the gate is inconclusive here (exit 3): changes beyond --factor that no test here can judge."""
        if not self.undetectable_rows:
            return []
        return [
            f"{kind}/{metric}: {self.undetectable_rows} case(s) changed beyond --factor {opts.factor:g} where no "
            f"test can reach --alpha {opts.alpha:g} ({self._sizes()})"
        ]


def mann_whitney_p(pairs: list[tuple[list[float], list[float]]]) -> list[float]:
    """The two-sided Mann-Whitney p of each (a, b), one scipy call per batch of equal sizes and equal tie
    status: scipy picks the exact or the normal method by the sizes and by whether a batch holds any tie,
    so rows are batched only with rows it would treat alike (the p values are those of one call a row)."""
    from scipy.stats import mannwhitneyu

    batches: dict[tuple[int, int, bool], list[int]] = {}
    for i, (a, b) in enumerate(pairs):
        ties = len(set(a) | set(b)) < len(a) + len(b)
        batches.setdefault((len(a), len(b), ties), []).append(i)
    out = [math.nan] * len(pairs)
    for rows in batches.values():
        a = np.array([pairs[i][0] for i in rows], dtype=float)
        b = np.array([pairs[i][1] for i in rows], dtype=float)
        p = np.atleast_1d(mannwhitneyu(a, b, alternative="two-sided", axis=1).pvalue)
        for i, value in zip(rows, p, strict=True):
            out[i] = float(value)
    return out


def process_test(a: list[float], b: list[float]) -> tuple[float | None, str]:
    """(p, how) for values one per fresh process (benches/_processes.py): Welch's t test on their logs, the
    process as the unit. A process far off widens its side's variance, so it weakens the test rather than
    faking a change (the row's ratio stays the medians'). Under 2 processes a side: no p, the factor alone."""
    from scipy.stats import ttest_ind

    if len(a) < 2 or len(b) < 2:
        return None, f"{min(len(a), len(b))} process(es) a side: no test, factor only"
    la, lb = np.log(np.asarray(a, dtype=float)), np.log(np.asarray(b, dtype=float))
    if np.ptp(np.concatenate([la, lb])) == 0:
        return 1.0, f"identical over {len(a)} vs {len(b)} processes"
    p = float(ttest_ind(la, lb, equal_var=False).pvalue)
    if not math.isfinite(p):  # each side constant, the two apart: as separated as values can be
        p = 0.0
    return p, f"t test over {len(a)} vs {len(b)} processes"


def run_medians(group: MetricGroup, direction: str) -> list[float]:
    """One median per run (several run ids may be given per side)."""
    size = abs if direction.endswith("_abs") else float
    return [median([size(v) for v in vals]) for vals in group.run_values.values()]


def median(values: list[float]) -> float:
    """The median, NaN left out (as pandas' median: the same numpy median of the finite values), without a
    Series per case."""
    arr = np.asarray(values, dtype=float)
    arr = arr[~np.isnan(arr)]
    return float(np.median(arr)) if arr.size else math.nan


def hashes(by_case: dict[str, frozenset], group: MetricGroup) -> frozenset:
    return frozenset().union(*(by_case.get(c, frozenset()) for c in group.case_ids))


def settle_not_finite(row: CompareRow, a: list[float], b: list[float]) -> bool:
    """NaN or inf among the values is never `~` or `=`: new ones where the base is finite are a regression
    (a result broke), any in the base leave nothing to compare against (x). True: the row is settled."""
    bad_b, bad_n = sum(not math.isfinite(v) for v in a), sum(not math.isfinite(v) for v in b)
    if not bad_b and not bad_n:
        return False
    row.ratio = row.ratio if row.ratio is not None and math.isfinite(row.ratio) else None
    if bad_b:
        row.mark, row.note = (
            "x",
            f"base has {bad_b} of {len(a)} values not finite (nan or inf): nothing to compare",
        )
    else:
        row.mark, row.note = (
            "+",
            f"new has {bad_n} of {len(b)} values not finite (nan or inf); the base's are finite",
        )
    return True
