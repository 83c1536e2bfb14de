"""The compare rows that speak for whole cases: a status that changed between the runs (a regression when it
got worse), and every case no metric row covers, so that no case of either run goes unaccounted for."""

from __future__ import annotations

import json

import pandas as pd

from normbench.analysis.rows import NOT_RUN, CompareRow, describe_case, varying_params


def status_rows(kind, base, new, bench, varying: frozenset[str] | None = None) -> list[CompareRow]:
    """Per case: a status that got worse is a regression whatever the numbers say. `varying`: the
    parameters that vary among the kind's cases, when the caller has them already."""
    sb = base.drop_duplicates("case_id").set_index("case_id")
    sn = new.drop_duplicates("case_id").set_index("case_id")
    out = []
    if varying is None:
        varying = varying_params(pd.concat([sb["params"], sn["params"]]))
    for case_id in sorted(set(sb.index) & set(sn.index)):
        old, now = sb.loc[case_id, "status"], sn.loc[case_id, "status"]
        if old == now:
            continue
        label = _label(sn.loc[case_id], bench, varying)
        reason = sn.loc[case_id, "error"]
        note = f"{old} -> {now}" + (f": {reason}" if isinstance(reason, str) and reason else "")
        if old in NOT_RUN or now in NOT_RUN:
            mark = "x"
        else:
            mark = "!" if old == "ok" else ("-" if now == "ok" else "x")
        out.append(CompareRow(mark, kind, label, "status", note=note, case_ids=frozenset([case_id])))
    return out


def _label(row, bench, varying) -> str:
    params = json.loads(row["params"])
    if bench is None:
        return f"{row['norm']}:{row['impl']} " + " ".join(f"{k}={v}" for k, v in params.items())
    return describe_case(row["norm"], row["impl"], params, bench, varying)


def uncovered_rows(
    kind,
    base,
    new,
    bench,
    rows: list[CompareRow],
    varying: frozenset[str] | None = None,
    *,
    deterministic_only: bool = False,
) -> list[CompareRow]:
    """The cases no metric or status row speaks for: compared by their status when both runs have them
    (a case unavailable in both, one whose bench stores no compare metric, or, under deterministic_only, a
    timed case, whose timings are not gated), else `x`."""
    covered = frozenset().union(*(r.case_ids for r in rows))
    sb = base.drop_duplicates("case_id").set_index("case_id")
    sn = new.drop_duplicates("case_id").set_index("case_id")
    if varying is None:
        varying = varying_params(pd.concat([sb["params"], sn["params"]]))
    out, timed_only = [], set() if deterministic_only else _timed_only(base, new, bench)
    for case_id in sorted((set(sb.index) | set(sn.index)) - covered):
        side = sn if case_id in sn.index else sb
        label = _label(side.loc[case_id], bench, varying)
        ids = frozenset([case_id])
        if case_id not in sb.index or case_id not in sn.index:
            note = "only in " + ("new" if case_id in sn.index else "base")
            out.append(CompareRow("x", kind, label, "status", note=note, case_ids=ids))
        elif bench is None:
            note = f"bench kind {kind!r} is not registered here (a plugin not loaded?)"
            out.append(CompareRow("x", kind, label, "status", note=note, case_ids=ids))
        elif case_id in timed_only:  # timed, yet nothing gated: not a pass (a run from before paired rounds)
            what = ", ".join(bench.compare_metrics)
            note = f"timed, but no {what} in both runs (stored before paired rounds?): --absolute compares its time"
            out.append(CompareRow("x", kind, label, "status", note=note, case_ids=ids))
        else:
            status = sb.loc[case_id, "status"]
            what = ", ".join(bench.compare_metrics) or "no compare metric"
            note = f"{status} in both runs; no values of {what}: status compared"
            if deterministic_only and bench.paired_metrics:
                note = f"{status} in both runs; timings not gated (--deterministic-only): status compared"
            out.append(CompareRow("=", kind, label, "status", note=note, case_ids=ids))
    return out


def _timed_only(base: pd.DataFrame, new: pd.DataFrame, bench) -> set[str]:
    """Cases with an absolute time that compare leaves ungated (the bench's gated metrics are absent)."""
    if bench is None or not bench.compare_metrics or not bench.absolute_metrics:
        return set()
    timed = [set(f.loc[f["metric"].isin(list(bench.absolute_metrics)), "case_id"]) for f in (base, new)]
    return timed[0] & timed[1]
