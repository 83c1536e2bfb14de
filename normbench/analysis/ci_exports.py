"""A run's timings in the formats two continuous-benchmarking services ingest (`normbench export --format`):
gab (github-action-benchmark, `tool: customSmallerIsBetter`) and bmf (Bencher Metric Format). One benchmark
per ok case with timing rows, named by its bench, norm:impl and the parameters that differ from the bench's
defaults; its value the median time per call in nanoseconds, and its paired ratio to its reference (a
measure a runner's speed does not move). Fields and what is left out: docs/ci.md, "The GitHub Actions
example"."""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field

from normbench.analysis.rows import describe_case
from normbench.benches import all_benches
from normbench.core.errors import NormbenchError

STATS = ("median", "p20", "p80", "iqr")  # the timing rows read, time_<stat>, in seconds
NS = 1e9
MAX_NAME = 1024  # Bencher's limit on a benchmark name


@dataclass
class Timing:
    name: str
    run_id: str
    median_s: float
    p20_s: float
    p80_s: float
    iqr_s: float
    samples: int
    # time over the case's reference's, taken in the same rounds (time_vs_ref): median and 95% interval
    ratio: float = math.nan
    ratio_lo: float = math.nan
    ratio_hi: float = math.nan
    reference: str = ""


@dataclass
class Exported:
    timings: list[Timing]
    left_out: Counter = field(default_factory=Counter)  # reason -> cases

    def summary(self) -> str:
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(self.left_out.items()))
        return f"timed cases: {len(self.timings)} (median ns and spread)" + (
            f"; not exported: {why}" if why else ""
        )


def timings(frame, manifests: list[dict]) -> Exported:
    """The timing of every ok case of the runs, named by its label; a name in two runs is refused."""
    ids = [m["run_id"] for m in manifests]
    if len(set(ids)) < len(ids):
        raise NormbenchError(f"a run given twice ({', '.join(ids)}): each benchmark would appear twice")
    labels = {(m["run_id"], c["case_id"]): c.get("label") for m in manifests for c in m.get("cases") or []}
    result = Exported([])
    seen: dict[str, str] = {}
    for (run_id, case_id), rows in frame.groupby(["run_id", "case_id"], sort=True):
        kind = str(rows["bench"].iloc[0])
        if (rows["status"] != "ok").any():
            result.left_out[f"{rows['status'].iloc[0]} cases"] += 1
            continue
        values = dict(zip(rows["metric"], rows["value"], strict=False))
        if not all(f"time_{s}" in values for s in STATS):
            result.left_out[f"{kind} cases (no timing rows)"] += 1
            continue
        name = _name(rows, kind) or labels.get((run_id, case_id)) or f"{kind} {case_id}"
        if name in seen:
            raise NormbenchError(
                f"case {name!r} is in runs {seen[name]} and {run_id}: export one run (or the shards of one)"
            )
        if len(name) > MAX_NAME:
            raise NormbenchError(f"case {case_id} of {run_id}: label longer than {MAX_NAME} characters")
        seen[name] = run_id
        samples = int(((rows["metric"] == "time") & rows["sample"].notna()).sum())
        stats = {s: float(values[f"time_{s}"]) for s in STATS}
        if not math.isfinite(stats["median"]):  # no number to chart: left out, counted
            result.left_out[f"{kind} cases (median time not finite)"] += 1
            continue
        ratio = [float(values.get(f"time_vs_ref_{s}", math.nan)) for s in ("median", "lo", "hi")]
        refs = rows.loc[rows["metric"] == "time_vs_ref_median", "reference"] if "reference" in rows else []
        reference = str(refs.iloc[0]) if len(refs) and isinstance(refs.iloc[0], str) else ""
        result.timings.append(
            Timing(
                name,
                run_id,
                stats["median"],
                stats["p20"],
                stats["p80"],
                stats["iqr"],
                samples,
                *ratio,
                reference,
            )
        )
    if not result.timings:
        raise NormbenchError(
            "nothing to export: no case with status ok has timing rows (latency or block bench)"
            + (f"; {result.summary().split('; ', 1)[-1]}" if result.left_out else "")
        )
    return result


def _name(rows, kind: str) -> str | None:
    """ "<bench> <norm:impl> <parameters unlike the bench's defaults>", as a summary names a case alone."""

    bench = all_benches().get(kind)
    first = rows.iloc[0]
    if bench is None or not isinstance(first.get("params"), str):
        return None
    norm = first.get("norm") if isinstance(first.get("norm"), str) else None
    return f"{kind} {describe_case(norm, first.get('impl'), json.loads(first['params']), bench)}".strip()


def _ns(seconds: float) -> float | None:
    """Nanoseconds, or None for a spread that was not measured (NaN: JSON has no such number)."""
    return round(seconds * NS, 3) if math.isfinite(seconds) else None


def to_github_action_benchmark(exported: Exported) -> list[dict]:
    out = []
    for t in exported.timings:
        entry = {"name": t.name, "unit": "ns", "value": _ns(t.median_s)}
        if _ns(t.iqr_s) is not None:
            entry["range"] = f"± {_ns(t.iqr_s / 2)}"
        spread = (
            f"; p20 {_ns(t.p20_s)} ns, p80 {_ns(t.p80_s)} ns"
            if None not in (_ns(t.p20_s), _ns(t.p80_s))
            else ""
        )
        entry["extra"] = f"median of {t.samples} samples{spread}; run {t.run_id}"
        out.append(entry)
        if math.isfinite(t.ratio):  # the same case's paired ratio: a second series, in units of its reference
            ratio = {"name": f"{t.name} ÷ reference", "unit": "x", "value": round(t.ratio, 6)}
            if math.isfinite(t.ratio_lo) and math.isfinite(t.ratio_hi):
                ratio["range"] = f"± {round((t.ratio_hi - t.ratio_lo) / 2, 6)}"
            ratio["extra"] = (
                f"time over {t.reference or 'its reference'}'s, in the same rounds; run {t.run_id}"
            )
            out.append(ratio)
    return out


def to_bencher(exported: Exported) -> dict[str, dict]:
    out = {}
    for t in exported.timings:
        latency = {"value": _ns(t.median_s), "lower_value": _ns(t.p20_s), "upper_value": _ns(t.p80_s)}
        out[t.name] = {"latency": {k: v for k, v in latency.items() if v is not None}}
        if math.isfinite(t.ratio):  # a second measure: the paired ratio to the case's reference
            ratio = {"value": t.ratio, "lower_value": t.ratio_lo, "upper_value": t.ratio_hi}
            out[t.name]["time_vs_ref"] = {k: v for k, v in ratio.items() if math.isfinite(v)}
    return out
