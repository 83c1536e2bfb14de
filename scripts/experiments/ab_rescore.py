"""Re-score stored `normbench ab` results offline: every timed case's marks under two A/A spreads, from the
per-process ratios each result keeps (its first K processes, before any second look):

  variance   the spread ab used first: Z = 2 times the standard error from the pooled standard deviation of
             the log ratios (one outlier process inflates it)
  mad-z2     the same with the pooled MAD scale in place of the standard deviation (Z still 2)
  mad        ab's spread now (ab/spread.py::case_spread): the pooled MAD scale times c_k, simulated so that
             the interval covers 95% for normal log ratios (c_5 ≈ 3.0, c_10 ≈ 2.2)

Prints one line per result (the + and ? cases under each) and the totals; docs/ci.md reports them.

    python scripts/experiments/ab_rescore.py RESULT.json [...] [--factor 1.1] [--k 5]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from statistics import median

from normbench.ab.gate import _mark
from normbench.ab.spread import case_spread
from normbench.core.robust import median_standard_error

Z = 2.0  # the z both older rules used


def variance_spread(ab: list[float], aa: list[float]) -> float:
    """The spread before the MAD: exp(Z · 1.2533 · pooled σ / √k), or the A/A's offset if larger."""
    k = len(ab)
    if k < 2 or len(aa) < 2:
        return math.inf

    def var(xs):
        m = sum(xs) / len(xs)
        return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)

    pooled = (var([math.log(v) for v in ab]) + var([math.log(v) for v in aa])) / 2
    se = 1.2533 * math.sqrt(pooled / k)
    return math.exp(max(Z * se, abs(math.log(median(aa)))))


def mad_z2_spread(ab: list[float], aa: list[float]) -> float:
    if len(ab) < 2 or len(aa) < 2:
        return math.inf
    se = math.sqrt(
        (
            median_standard_error([math.log(v) for v in ab]) ** 2
            + median_standard_error([math.log(v) for v in aa]) ** 2
        )
        / 2
    )
    return math.exp(max(Z * se, abs(math.log(median(aa)))))


def rescore(data: dict, factor: float, k: int) -> dict[str, dict[str, list[str]]]:
    out = {name: {"+": [], "?": []} for name in RULES}
    for c in data.get("cases", []):
        per = c.get("per_process") or {}
        ab, aa = (per.get(data.get("stat", "paired")) or [])[:k], (per.get("aa") or [])[:k]
        if not ab:
            continue
        ratio = median(ab)
        for name, spread in RULES.items():
            mark = _mark(ratio, spread(ab, aa), factor)
            if mark in "+?":
                out[name][mark].append(f"{c['kind']} {c['case']}")
    return out


RULES = {"variance": variance_spread, "mad-z2": mad_z2_spread, "mad": case_spread}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--factor", type=float, default=1.1)
    parser.add_argument("--k", type=int, default=5, help="processes of the first look")
    args = parser.parse_args()
    totals = {name: {"+": 0, "?": 0, "clean": 0} for name in RULES}
    for path in args.results:
        data = json.loads(path.read_text())
        got = rescore(data, args.factor, args.k)
        words = []
        for name, marks in got.items():
            totals[name]["+"] += len(marks["+"])
            totals[name]["?"] += len(marks["?"])
            totals[name]["clean"] += not marks["?"]
            words.append(f"{name}: {len(marks['+'])} +, {len(marks['?'])} ?")
        print(f"{path.name}: " + "; ".join(words))
    for name, t in totals.items():
        print(
            f"total {name}: {t['+']} +, {t['?']} ? ; results with no ?: {t['clean']} of {len(args.results)}"
        )


if __name__ == "__main__":
    main()
