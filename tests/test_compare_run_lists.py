"""compare's run lists: a run listed twice on a side is refused (it would double its samples), and every run
of a side, not only the first, is checked against the other side's environment."""

from __future__ import annotations

import pytest
from _compare_support import ENV, store_run

from normbench.analysis.compare.options import CompareRunsOptions
from normbench.analysis.compare.runs import compare_runs
from normbench.core.errors import NormbenchError

LATENCY = {"i0": 1e-4, "i1": 2e-4}


def _compare(tmp_path, base, new):
    return compare_runs(base, new, CompareRunsOptions(tmp_path, fmt="json"), lambda s: None)


def test_a_run_listed_twice_on_a_side_is_refused(tmp_path):
    for run in ("20260101-a", "20260102-b", "20260103-c"):
        store_run(tmp_path, run, latency=LATENCY)
    with pytest.raises(NormbenchError, match="run 20260101-a is listed twice"):
        _compare(tmp_path, "20260101-a,20260101-a", "20260102-b")
    with pytest.raises(NormbenchError, match=r"run 20260103-c is listed twice \(as latest\)"):
        _compare(tmp_path, "20260101-a", "20260103-c,latest")
    assert _compare(tmp_path, "20260101-a", "20260102-b,20260103-c").exit_code == 0


@pytest.mark.parametrize("order", ["odd-first", "odd-last"])
def test_a_run_on_another_cpu_is_incomparable_wherever_it_is_listed(tmp_path, order):
    store_run(tmp_path, "20260101-a", latency=LATENCY)
    store_run(tmp_path, "20260102-b", latency=LATENCY)
    store_run(tmp_path, "20260103-odd", latency=LATENCY, env={**ENV, "cpu": "Intel Xeon 8375C"})
    new = "20260103-odd,20260102-b" if order == "odd-first" else "20260102-b,20260103-odd"
    answer = _compare(tmp_path, "20260101-a", new)
    assert answer.exit_code == 3, answer.text
    assert "Intel Xeon 8375C" in answer.text
