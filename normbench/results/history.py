"""How long cases took in the stored runs: each case's wall time (`case_wall_s`, every case stores it) in
the newest runs of a results folder, for the run progress's estimate of what is left (cli/_eta.py). One
projected scan per run (four columns, one metric); a run that cannot be read is passed over."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from normbench.results.naming import list_run_ids

NEWEST_RUNS = 8  # enough history for the suites one reruns; reading more would delay the run's start


@dataclass
class CaseHistory:
    by_case: dict[str, float] = field(default_factory=dict)  # case_id -> median wall seconds
    # (kind, norm, impl) and (kind,) -> mean wall seconds: a mean, because one latency case times its
    # whole round set and the others of the set then take nothing
    by_kind: dict[tuple, float] = field(default_factory=dict)


def case_history(
    results_dir: Path, skip: str | None = None, runs: int = NEWEST_RUNS, also: str | None = None
) -> CaseHistory:
    """The newest `runs` runs' case times (leaving out run `skip`), and run `also` however old (the one
    being resumed: its finished cases are this machine's pace for the rest)."""
    import statistics

    seconds: dict[tuple, list[float]] = {}
    chosen = [r for r in list_run_ids(results_dir) if r != skip][-runs:]
    if also is not None and also not in chosen and (Path(results_dir) / also).is_dir():
        chosen.append(also)
    for run_id in chosen:
        for case_id, kind, norm, impl, value in _wall_times(Path(results_dir) / run_id / "parts"):
            for key in (("case", case_id), (kind, norm, impl), (kind,)):
                seconds.setdefault(key, []).append(value)
    history = CaseHistory()
    for key, values in seconds.items():
        if key[0] == "case":
            history.by_case[key[1]] = statistics.median(values)
        else:
            history.by_kind[key] = statistics.fmean(values)
    return history


def _wall_times(parts: Path) -> list[tuple]:
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    files = sorted(str(p) for p in parts.glob("*.parquet"))
    if not files:
        return []
    try:
        table = ds.dataset(files, format="parquet").to_table(
            columns=["case_id", "bench", "norm", "impl", "value"],
            filter=pc.field("metric") == "case_wall_s",
        )
    except Exception:  # an older or damaged run: no history from it
        return []
    columns = [table.column(c).to_pylist() for c in ("case_id", "bench", "norm", "impl", "value")]
    return [row for row in zip(*columns, strict=True) if row[-1] is not None]
