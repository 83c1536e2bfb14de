"""The report: each bench kind's tables for the rows it owns, then the cases that were not ok."""

from __future__ import annotations

from pathlib import PurePath

import pandas as pd

from normbench.analysis.claims import evaluate
from normbench.analysis.claims.summary import claims_note
from normbench.analysis.derived import derived_tables
from normbench.analysis.failures import failures_table
from normbench.analysis.runs import bench_rows
from normbench.analysis.tradeoff import tradeoff_records
from normbench.benches import all_benches
from normbench.core.errors import NormbenchError
from normbench.core.params import did_you_mean
from normbench.core.tables import ReportOptions, Table
from normbench.results.env import NODE_FIELDS, machine_summary, machines_of


def build_tables(
    frame: pd.DataFrame,
    manifests: list[dict],
    *,
    baseline: str | None = None,
    warnings: bool = True,
    opts: ReportOptions | None = None,
) -> list[Table]:
    """The report's tables, warnings first (warnings=False: left to the summary, which lists them).
    `opts`: the report's options when the summary shares them (report_options: what both derive is
    derived once; the caller that made them checked the baseline). Raises NormbenchError for a baseline
    not in the run."""
    if opts is None:
        check_baseline(frame, baseline)
        opts = report_options(manifests, baseline)
    warnings = opts.once("warnings", lambda: report_warnings(frame, manifests)) if warnings else []
    frame = opts.once("one copy per case", lambda: one_copy_per_case(frame))
    tables: list[Table] = []
    if warnings:
        tables.append(Table("Warnings", pd.DataFrame({"warning": warnings})))
    benches = all_benches()
    from normbench.analysis.records import bench_order

    for kind in sorted(dict.fromkeys(frame["bench"].unique()), key=bench_order):
        if kind in benches:
            for table in benches[kind].report(kind_rows(frame, benches[kind], opts), opts):
                tables.append(with_keys(table, benches[kind]))

    # across bench kinds: the norms' trade-off, the fluctuation
    tables.extend(derived_tables(frame, opts.once("tradeoff", lambda: tradeoff_records(frame))))
    if (claims := opts.once("claims", lambda: claims_table(frame, manifests))) is not None:
        tables.append(claims)
    if (failed := failures_table(frame)) is not None:
        tables.append(failed)
    if len(tables) == len(warnings[:1]):
        tables.append(Table("No results", pd.DataFrame({"note": ["the run stored no rows yet"]})))
    return tables


def report_options(manifests: list[dict], baseline: str | None = None) -> ReportOptions:
    """One report's options: the summary and the tables given the same one derive shared parts once."""
    return ReportOptions(baseline=baseline, machine=machines_of(manifests))


def kind_rows(frame: pd.DataFrame, bench, opts: ReportOptions) -> pd.DataFrame:
    """One bench kind's rows (analysis/runs.py bench_rows), taken from the frame once per report."""
    return opts.once(("rows", bench.kind), lambda: bench_rows(frame, bench))


LABEL_COLUMNS = ("norm", "impl", "config", "layer", "block")


def with_keys(table: Table, bench) -> Table:
    """The table tagged with its bench kind, and its key columns when report() did not name them: the
    leading columns that are the bench's parameters or row labels (norm, impl, layer ...)."""
    table.bench = bench.kind
    if not table.keys:
        names = set(bench.params) | set(bench.labels) | set(LABEL_COLUMNS)
        for column in table.frame.columns:
            if column not in names:
                break
            table.keys.append(column)
    return table


def claims_table(frame: pd.DataFrame, manifests: list[dict]) -> Table | None:
    claims = list(dict.fromkeys(c for m in manifests for c in m.get("claims", [])))
    if not claims:
        return None

    verdicts = evaluate(claims, frame)
    return Table("Claims", verdicts, claims_note(verdicts))


def check_baseline(frame: pd.DataFrame, baseline: str | None) -> None:
    """--speedup-vs must name an implementation the runs hold: a typo would silently show no speedups."""
    if baseline is None:
        return

    ok = frame[(frame["status"] == "ok") & frame["norm"].notna()]
    present = sorted(set(ok["norm"] + ":" + ok["impl"]))
    if baseline not in present:
        raise NormbenchError(
            f"--speedup-vs {baseline!r} is not in the run{did_you_mean(baseline, present)}; "
            f"implementations with results: {', '.join(present) or 'none'}"
        )


def report_warnings(frame: pd.DataFrame, manifests: list[dict]) -> list[str]:
    """What a reader must know before trusting the tables: missing cases, a busy machine, runs from
    different environments, nodes of different hardware, cases stored twice."""
    return [
        w
        for w in (
            *incomplete_warnings(frame, manifests),
            busy_machine_warning(frame, manifests),
            environment_warning(manifests),
            mixed_hardware_warning(frame, manifests),
            duplicate_warning(frame, manifests),
        )
        if w
    ]


def incomplete_warnings(frame: pd.DataFrame, manifests: list[dict]) -> list[str]:
    out = []
    for m in manifests:
        planned = {c["case_id"] for c in m.get("cases", [])}
        stored = set(frame.loc[frame["run_id"] == m["run_id"], "case_id"].unique())
        missing = len(planned - stored)
        if missing:
            out.append(
                f"run {m['run_id']} is incomplete: {missing} of {len(planned)} planned cases have no row "
                f"(`normbench run --resume {m['run_id']}` finishes them)"
            )
    return out


def busy_machine_warning(frame: pd.DataFrame, manifests: list[dict]) -> str | None:
    """Timings taken while other processes competed for the CPU are not this machine's speed: say so."""
    load = frame.loc[frame["metric"] == "loadavg_1m", ["run_id", "value"]]
    cores = {m["run_id"]: (m.get("env", {}).get("cpu_count") or 0) for m in manifests}
    if load.empty:
        return None
    over = load[load["value"] > load["run_id"].map(cores).fillna(0).where(lambda c: c > 0, float("inf"))]
    if over.empty:
        return None
    top = over.loc[over["value"].idxmax()]
    return (
        f"busy machine: {len(over)} of {len(load)} cases ran with the 1-minute load above the core count "
        f"(max {top['value']:.1f} on {cores[top['run_id']]} cores); their latencies include time stolen by "
        "other processes: rerun on a quiet machine"
    )


# The fields shown when runs of different environments are combined.
ENV_FIELDS = ("hostname", "cpu", "gpu", "python", "torch", "torch_threads", "cuda", "cudnn")


def environment_warning(manifests: list[dict]) -> str | None:
    if len(manifests) < 2:
        return None
    differ = []
    for key in ENV_FIELDS:
        values = list(dict.fromkeys(str(m.get("env", {}).get(key)) for m in manifests))
        if len(values) > 1:
            differ.append(f"{key}: {' / '.join(values)}")
    if not differ:
        return None
    return "the combined runs come from different environments (" + "; ".join(differ) + ")"


def mixed_hardware_warning(frame: pd.DataFrame, manifests: list[dict]) -> str | None:
    """A run spread over a Ray cluster whose nodes differ (CPU, cores, GPU, torch, CUDA): its tables mix
    machines. The manifest keeps each node's fingerprint under `nodes`; rows name their `ray_node`."""
    hardware = [f for f in NODE_FIELDS if f != "hostname"]
    nodes = {k: v for m in manifests for k, v in (m.get("nodes") or {}).items()}
    used = set(frame["ray_node"].dropna()) if "ray_node" in frame.columns else set()
    kinds: dict[tuple, list[str]] = {}
    for node_id, info in nodes.items():
        if node_id in used:
            kinds.setdefault(tuple(str(info.get(k)) for k in hardware), []).append(node_id)
    if len(kinds) < 2:
        return None
    described = "; ".join(
        f"{len(ids)} node(s) with " + ", ".join(f"{k}={v}" for k, v in zip(hardware, hw, strict=True))
        for hw, ids in kinds.items()
    )
    return (
        f"the cases ran on different hardware ({described}); the tables mix them (column ray_node says which)"
    )


def duplicate_warning(frame: pd.DataFrame, manifests: list[dict]) -> str | None:
    runs_per_case = frame.drop_duplicates(["case_id", "run_id"]).groupby("case_id")["run_id"].nunique()
    twice = runs_per_case[runs_per_case > 1]
    if twice.empty:
        return None
    return (
        f"{len(twice)} case(s) are stored in more than one of the runs; the tables show each from the first "
        "run given that holds it (order the run ids to choose)"
    )


def one_copy_per_case(frame: pd.DataFrame) -> pd.DataFrame:
    """Each case's rows from the first run (in the order given) that holds it: duplicates are not mixed."""
    first = frame.drop_duplicates("case_id")[["case_id", "run_id"]]
    if len(first) == frame.drop_duplicates(["case_id", "run_id"]).shape[0]:
        return frame
    keep = frame.merge(first, on=["case_id", "run_id"], how="left", indicator=True)["_merge"] == "both"
    return frame[keep.to_numpy()]


def markdown_header(manifests: list[dict]) -> str:
    lines = ["# normbench report", ""]
    for m in manifests:
        lines.append(
            f"- run `{m['run_id']}`: suite `{m.get('suite')}` ({suite_file(m.get('suite_source'))}, sha256 "
            f"{m.get('suite_sha256', '')[:12]}), started {m.get('started')}, {machine_summary(m.get('env', {}))}"
        )
    return "\n".join(lines) + "\n\n"


def suite_file(source: str | None) -> str:
    """The suite file as a shared report names it: a relative path as given, an absolute one by its
    name (the sha256 beside it identifies the text; the folder is this machine's)."""
    if not source:
        return "no file"
    path = PurePath(source)
    return path.name if path.is_absolute() else str(path)
