"""The latency bench's cases as its report reads them: one row per ok case with its keys, `label`
(norm:impl), every scalar metric, `time` (the case's statistic), `high_spread` and its time over the
baseline's at the same keys (paired where the run allows: versus.py). Built once per report and read by the
summary lines (headline.py) and the tables (report.py), so that both print the same numbers. Also the
words that name a shape: `512×1024 bf16 fwd cold`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from normbench.benches import get_bench
from normbench.benches._latency.versus import COLUMNS, versus
from normbench.core.stats import HIGH_SPREAD, high_spread
from normbench.norms import SPEEDUP_REFERENCES

if TYPE_CHECKING:
    import pandas as pd

    from normbench.core.tables import ReportOptions

KEYS = ["device", "dtype", "mode", "cache", "cuda_graph", "input", "stat", "preset", "tokens", "d"]
BARE = ("device", "dtype", "mode", "cache", "input")  # values that name themselves: "bf16", "fwd", "cold"


@dataclass
class LatencyCases:
    ok: pd.DataFrame  # the ok rows
    cases: pd.DataFrame  # one row per ok case (see the module docstring)
    keys: list[str]  # the parameters that tell two rows of a table apart
    fixed: dict  # the parameters the same in every case, with their value
    baseline: str | None  # what vs_ratio is taken against (norm:impl)


def latency_cases(rows: pd.DataFrame, opts: ReportOptions) -> LatencyCases | None:
    """The report's case table, computed once per report (opts.once); None without an ok timed case."""
    return opts.once(("latency cases", opts.baseline), lambda: _build(rows, opts.baseline))


def _build(rows: pd.DataFrame, baseline: str | None) -> LatencyCases | None:
    ok = rows[rows["status"] == "ok"]
    if ok.empty or "time_median" not in set(ok["metric"].unique()):
        return None
    keys, fixed = varying_keys(ok)
    cases = case_frame(ok, keys)
    cases = cases[cases["time"].notna()].reset_index(drop=True)
    iqr = cases["time_iqr"] if "time_iqr" in cases else 0.0 * cases["time"]
    cases["high_spread"] = [
        bool(high_spread(m, q)) for m, q in zip(cases["time_median"], iqr.fillna(0.0), strict=True)
    ]
    # A case timed in paired rounds is judged by its ratio, not its seconds (which carry the machine's
    # phases): the 95% interval of its ratio to the copy probe (or to the reference) wider than 10%
    for metric in ("time_vs_ref", "time_vs_copy"):
        if f"{metric}_lo" in cases:
            width = (cases[f"{metric}_hi"] - cases[f"{metric}_lo"]) / cases[f"{metric}_median"]
            paired = width.notna()
            cases.loc[paired, "high_spread"] = width[paired] > HIGH_SPREAD
    base = baseline or default_baseline(ok, set(cases["label"]))
    if base is None:
        cases[COLUMNS] = float("nan")
    else:
        cases[COLUMNS] = versus(ok, cases, base, keys)
    return LatencyCases(ok, cases, keys, fixed, base)


def varying_keys(ok: pd.DataFrame) -> tuple[list[str], dict]:
    """Row keys: the shape and settings in KEYS, then any other parameter the suite sweeps (eps, seed,
    samples, ...), so that one row holds one case per implementation; and every parameter that is the
    same in every case, with its value."""
    bench = get_bench("latency")
    # a parameter that is also a row label (reference: what each ratio row is a ratio to) names rows,
    # not cases: it never tells two cases apart
    others = [k for k in bench.params if k not in KEYS and k not in bench.labels and k in ok.columns]
    present = [k for k in KEYS + others if k in ok.columns]
    varying = [k for k in present if ok[k].astype(str).nunique() > 1 or k in ("tokens", "d")]
    fixed = {k: ok[k].iloc[0] for k in present if k not in varying and ok[k].notna().any()}
    return varying, fixed


def case_frame(ok: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per case: its keys, `label` (norm:impl), every scalar metric as a column, and `time` = the
    case's statistic (time_median or time_min)."""
    scalar = ok if "tensor" not in ok.columns else ok[ok["tensor"].isna()]
    if "process" in scalar.columns:  # one process's values (benches/_processes.py): not the case's
        scalar = scalar[scalar["process"].isna()]
    wide = scalar.pivot_table(index="case_id", columns="metric", values="value", aggfunc="first")
    extra = ["stat"] if "stat" in ok.columns and "stat" not in keys else []
    labels = ok.drop_duplicates("case_id").set_index("case_id")[keys + extra + ["norm", "impl"]]
    cases = labels.join(wide).reset_index()
    cases["label"] = cases["norm"] + ":" + cases["impl"]
    stats = cases["stat"] if "stat" in cases.columns else pd.Series("median", index=cases.index)
    cases["time"] = [cases.at[i, f"time_{s}"] if f"time_{s}" in cases else None for i, s in stats.items()]
    cases["time"] = pd.to_numeric(cases["time"])
    return cases.sort_values(row_order(keys) + ["label"]).reset_index(drop=True)


def row_order(keys: list[str]) -> list[str]:
    """The keys in the order rows are sorted: device, dtype and mode, then the shape, then the rest."""
    first = [k for k in ("device", "dtype", "mode", "tokens", "d") if k in keys]
    return first + [k for k in keys if k not in first]


def default_baseline(ok: pd.DataFrame, present: set[str]) -> str | None:
    """What the run's ratios are taken against when the reader names nothing: the reference its cases
    were timed against (the suite's `reference`), else the first of SPEEDUP_REFERENCES the run holds."""
    if "reference" in ok.columns:
        refs = ok.loc[ok["metric"] == "time_vs_ref_median", "reference"].dropna()
        if len(refs):
            return str(refs.mode().iloc[0])
    return next((b for b in SPEEDUP_REFERENCES if b in present), None)


def shape_words(key: dict, skip: tuple[str, ...] = ()) -> str:
    """A row's name: "512×1024 bf16 fwd", then each other setting that is not its default ("cold",
    "stat=min", "eps=1e-06"); `skip` leaves out keys said elsewhere (a group's dtype and mode)."""
    params = get_bench("latency").params
    words = [f"{key['tokens']}×{key['d']}"] if "tokens" in key and "d" in key else []
    for k, v in key.items():
        if k in ("tokens", "d") or k in skip:
            continue
        default = params[k].default if k in params else None
        if k in ("dtype", "mode") or (k in BARE and str(v) != str(default)):
            words.append(str(v))
        elif k not in BARE and str(v) != str(default):
            words.append(f"{k}={v}")
    return " ".join(words)


def fixed_words(fixed: dict) -> str:
    """The settings every row shares, for a table's caption: "cpu, fp32, fwd, warm, samples=10": the
    device, dtype, mode and cache state, and each other setting that is not its default."""
    params = get_bench("latency").params
    words = []
    for k, v in fixed.items():
        if k in ("device", "dtype", "mode", "cache"):
            words.append(str(v))
        elif k in params and str(v) != str(params[k].default):
            words.append(str(v) if k in BARE else f"{k}={v}")
    return ", ".join(words)
