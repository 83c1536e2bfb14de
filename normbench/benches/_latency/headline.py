"""The latency bench's lines in the report summary (Latency.headline): per shape the fastest implementation,
its time, its GB/s as a share of the copy probe's and how much faster or slower than the baseline it is
(the run's reference; the paired ratio with its 95% interval), grouped by dtype and mode; with more than
MAX_SHAPE_LINES shapes, one line per group instead. Then what to distrust. The numbers are the tables'
(cases.py builds both)."""

from __future__ import annotations

import pandas as pd

from normbench.benches._latency.cases import latency_cases, row_order, shape_words
from normbench.benches._latency.notes import SLOWDOWN_FLAG
from normbench.core.tables import ReportOptions, format_seconds, versus_words

MAX_SHAPE_LINES = 12  # more shapes than this: one line per dtype and mode instead
GROUP_KEYS = ("device", "dtype", "mode")  # the per-shape lines are grouped by these


def latency_headline(rows: pd.DataFrame, opts: ReportOptions) -> list[str]:
    """The per-shape answer (or the groups' medians), then what to distrust."""
    found = latency_cases(rows, opts)
    if found is None:
        return []
    cases, keys, baseline = found.cases, found.keys, found.baseline
    contenders = cases[cases["norm"] != "identity"]
    if contenders.empty:
        return []
    group_keys = [k for k in GROUP_KEYS if k in keys]
    shapes = contenders.groupby(keys, sort=True, dropna=False)
    if shapes.ngroups <= MAX_SHAPE_LINES:
        lines = _shape_lines(contenders, keys, group_keys, baseline)
    else:
        lines = _group_lines(contenders, keys, group_keys, baseline)
    return [*lines, *_latency_distrust(cases)]


def _shape_lines(contenders: pd.DataFrame, keys: list[str], group_keys: list[str], baseline) -> list[str]:
    """One line per shape, in aligned columns: group (once), shape, fastest, time, copy share, vs."""
    cells = []
    order = row_order(keys)
    for key, group in contenders.groupby(order, sort=True, dropna=False):
        named = dict(zip(order, key, strict=True))
        best = group.loc[group["time"].idxmin()]
        copy = best.get("copy_fraction")
        cells.append(
            [
                " ".join(str(named[k]) for k in group_keys),
                shape_words(named, skip=tuple(group_keys)),
                best["label"],
                format_seconds(best["time"]),
                f"{copy:.0%}" + (" ⚠" if copy > 1 else "") if pd.notna(copy) else "",
                _versus_cell(best, group, baseline),
            ]
        )
    widths = [max(len(c[i]) for c in cells) for i in range(len(cells[0]) - 1)]
    lines, previous = [], None
    for c in cells:
        shown = [c[0] if c[0] != previous else "", *c[1:-1]]
        previous = c[0]
        aligned = "  ".join(f"{v:<{w}}" for v, w in zip(shown, widths, strict=True) if w)
        lines.append(f"{aligned}  {c[-1]}".rstrip())  # a long line wraps (summary_text), never cut
    others = contenders[contenders["label"] != baseline]
    paired = others["vs_paired"].fillna(False).astype(bool).any()
    k = others["processes"].max() if "processes" in others else float("nan")
    over = paired and k > 1  # what the interval is over gets its own line: the heading has no room for it
    than = f", vs {baseline} (paired{'' if over else ', 95% interval'})" if paired else f", vs {baseline}"
    meaning = [f"[ ]: 95% interval over {int(k)} processes: where a rerun's ratio lands"] if over else []
    return [
        f"per shape: fastest, its time, GB/s as % of the copy probe's{than if baseline else ''}",
        *lines,
        *meaning,
    ]


def _versus_cell(best: pd.Series, group: pd.DataFrame, baseline: str | None) -> str:
    """How the fastest compares with the baseline; when it is the baseline, said so, and how the next
    one does."""
    if baseline is None:
        return ""
    if best["label"] == baseline:
        others = group[group["label"] != baseline]
        if others.empty:
            return "(the reference) the only one timed"
        runner = others.loc[others["time"].idxmin()]
        return f"(the reference) is fastest; next {runner['label']} " + _words(runner)
    return _words(best)


def _words(case: pd.Series) -> str:
    if pd.isna(case.get("vs_ratio")):
        return ""
    words = versus_words(case["vs_ratio"], case["vs_lo"], case["vs_hi"])
    return words if case["vs_paired"] else f"{words} (unpaired)"


def _group_lines(contenders: pd.DataFrame, keys: list[str], group_keys: list[str], baseline) -> list[str]:
    """Per dtype and mode: which implementation is fastest in how many shapes, the median over shapes
    of the fastest's ratio to the baseline (with the range) and of its copy share; then where every
    shape's answer is."""
    best = contenders.loc[contenders.groupby(keys, dropna=False)["time"].idxmin()]
    groups = best.groupby(group_keys, sort=True, dropna=False) if group_keys else [((), best)]
    lines = []
    for key, g in groups:
        name = " ".join(map(str, key if isinstance(key, tuple) else (key,))) or "all"
        wins = ", ".join(f"{label} {n}" for label, n in g["label"].value_counts().items())
        text = f"{name} ({len(g)} shapes): fastest {wins}"
        ratio = g["vs_ratio"].dropna()
        if baseline and len(ratio):
            text += f"; median {versus_words(ratio.median(), ref=baseline)}"
            if len(ratio) > 1:
                text += f" (range over shapes {ratio.min():.2g}–{ratio.max():.3g})"
        copy = g["copy_fraction"].dropna() if "copy_fraction" in g else []
        if len(copy):
            text += f"; copy {copy.median():.0%}"
        lines.append(text)
    lines.append(f"each of the {len(best)} shapes: `normbench report --table latency`")
    return lines


def _latency_distrust(rec: pd.DataFrame) -> list[str]:
    """Cases whose number should not be taken at face value: high spread, above the copy probe, page
    faults in the timed calls, timed while the machine ran slower than its best (machine_slowdown),
    accuracy against float64 suspect."""
    parts = []
    n = len(rec)
    if "high_spread" in rec and (spread := int(rec["high_spread"].fillna(False).astype(bool).sum())):
        parts.append(f"{spread}/{n} cases spread > 10% (!: IQR of the time, or the paired ratio's interval)")
    # the copy probe timed against its own probe: above 1 is noise there, not implausible
    norms = rec[rec["norm"] != "identity"]
    if "above_copy" in rec and (above := int((norms["above_copy"].fillna(0) > 0).sum())):
        parts.append(f"{above} above the copy probe (⚠)")
    if "faulted" in rec and (faulted := int((rec["faulted"].fillna(0) > 0).sum())):
        parts.append(f"{faulted} page-faulted")
    if "machine_slowdown" in rec and (slowed := int((rec["machine_slowdown"] >= SLOWDOWN_FLAG).sum())):
        parts.append(f"{slowed} on a slowed machine (up to {rec['machine_slowdown'].max():.2f}×)")
    lines = ["distrust: " + "; ".join(parts)] if parts else []
    if "accuracy_suspect" in rec:
        checked = rec[rec["accuracy_suspect"].notna()]
        suspect = checked[checked["accuracy_suspect"] > 0]
        if len(suspect):
            names = suspect["label"].value_counts()
            lines.append(
                f"accuracy SUSPECT (error > 2× eager's, vs float64) in {len(suspect)} of {len(checked)} cases: "
                + ", ".join(f"{label} ({k})" for label, k in names.items())
            )
        elif len(checked):
            lines.append(
                f"accuracy: all {len(checked)} checked cases within 2× PyTorch eager's error vs float64"
            )
    return lines
