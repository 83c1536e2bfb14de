"""Did a refactor change what a suite records? Given two runs of the old code and one of the new (same suite,
same machine): the same case ids and statuses, and every value of each metric that repeats exactly between
the two old runs (seeded errors, byte counts, losses: not the clock's) is the same in the new run. Exit 1 on a difference.

    python scripts/same_results.py RESULTS_A/RUN RESULTS_B/RUN RESULTS_NEW/RUN
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

# read off the clock or the kernel although they often repeat: whether a norm is slower than its copy probe,
# and the page faults counted while the norm or its copy probe was timed (0 in most runs, not in all)
MACHINE_READINGS = {
    "above_copy",
    "faults_per_call",
    "fault_samples",
    "copy_faults_per_call",
    "copy_fault_samples",
    "faulted",
}
KEY = ["case_id", "metric", "step", "layer", "site", "tensor", "sample"]


def load(run: Path) -> tuple[pd.Series, pd.Series]:
    """(status per case id, the values per row key as a tuple: a key may repeat within a case)."""
    frame = pd.read_parquet(run / "parts")
    key = [k for k in KEY if k in frame]
    values = frame.groupby(key, dropna=False, sort=True)["value"].agg(lambda v: tuple(v.fillna(-0.0)))
    return frame.groupby("case_id")["status"].first().sort_index(), values


def main(a: str, b: str, new: str) -> int:
    (status, old1), (_, old2), (status_new, now) = (load(Path(p)) for p in (a, b, new))
    problems = []
    ids_ok = set(status.index) == set(status_new.index) and status.equals(status_new)
    if set(status.index) != set(status_new.index):
        problems.append(f"case ids differ: {sorted(set(status.index) ^ set(status_new.index))}")
    elif not status.equals(status_new):
        problems.append(f"statuses differ: {status[status != status_new].to_dict()}")
    # a metric is repeatable when every one of its values repeats between the two old runs (a calibrated
    # loop count or a page share that happened to match once is not)
    both = old1.index.intersection(old2.index)
    equal = pd.Series(old1.loc[both].to_numpy() == old2.loc[both].to_numpy(), index=both)
    repeatable = equal.groupby(level="metric").all()
    repeatable = repeatable[repeatable & ~repeatable.index.isin(MACHINE_READINGS)]
    steady = both[both.get_level_values("metric").isin(repeatable.index)]
    missing = steady.difference(now.index)
    if len(missing):
        problems.append(
            f"{len(missing)} repeatable values have no row in the new run, e.g. {list(missing[:3])}"
        )
    shared = steady.intersection(now.index)
    same = old1.loc[shared].to_numpy() == now.loc[shared].to_numpy()
    if not same.all():
        problems.append(f"{int((~same).sum())} repeatable values changed, e.g. {list(shared[~same][:3])}")
    metrics = sorted({i[1] for i in shared})
    print(
        f"{len(status_new)} cases, {'same' if ids_ok else 'different'} ids and statuses; {len(shared)} "
        f"repeatable values of {len(old1)} ({len(metrics)} metrics: {', '.join(metrics)})"
        + ("" if not problems else "\n" + "\n".join(problems))
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
