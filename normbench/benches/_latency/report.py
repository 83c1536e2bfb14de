"""Report tables of the latency bench:

1. Latency: rows = shape and settings, columns = norm:impl, cells = time per call ('!' when the IQR is over
   10% of the median), the fastest implementation and how much faster than the baseline it is (paired).
2. Bandwidth: the same grid, GB/s from the byte model and the fraction of the copy probe; a figure above
   the copy is marked implausible, never shown as a win.
3. Norms head to head: per shape, the fastest implementation of each norm (and the copy probe).
4. Per implementation: peak memory, compile time, fraction of the nominal peak where known.
5. Accuracy vs float64: output error, relative error, ratio to PyTorch's eager error, worst gradient ratio.
Times are each case's chosen statistic of its raw samples (`stat`: median by default, or min). Parameters
that are the same in every row are moved to a note to keep the tables narrow.
"""

from __future__ import annotations

from normbench.benches import get_bench
from normbench.benches._latency.notes import process_notes, without_reference
from normbench.core.tables import Table, format_seconds, versus_words

KEYS = ["device", "dtype", "mode", "cache", "cuda_graph", "input", "stat", "preset", "tokens", "d"]
IMPLAUSIBLE = "⚠ above copy"


def latency_tables(frame, opts) -> list[Table]:
    ok = frame[frame["status"] == "ok"]
    if ok.empty:
        return []
    keys, fixed = _varying_keys(ok)
    cases = _case_frame(ok, keys)
    notes = [
        f"Machine: {opts.machine}." if opts.machine else "",
        _fixed_note(fixed),
        *process_notes(ok, cases),
    ]
    if unjudged := without_reference(ok):
        notes.append(f"No float64 reference, so no accuracy rows (the norm declares none): {unjudged}.")
    tables = _grid_tables(ok, cases, keys, opts, notes) + [
        _head_to_head(cases, keys, notes),
        _per_impl(cases, keys),
    ]
    if "err_abs" in set(ok["metric"]):
        tables.append(_accuracy(ok, cases, keys))
    return tables


def _varying_keys(ok):
    """Row keys: the shape and settings in KEYS, then any other parameter the suite sweeps (eps, seed,
    samples, ...), so that one row holds one case per implementation."""
    others = [k for k in get_bench("latency").params if k not in KEYS and k in ok.columns]
    present = [k for k in KEYS + others if k in ok.columns]
    varying = [k for k in present if ok[k].astype(str).nunique() > 1 or k in ("tokens", "d")]
    present = [k for k in present if k in KEYS or k in varying]  # constant non-key params: not in the note
    fixed = {k: ok[k].iloc[0] for k in present if k not in varying}
    return varying, fixed


def _fixed_note(fixed: dict) -> str:
    return ("All rows: " + ", ".join(f"{k}={v}" for k, v in fixed.items()) + ".") if fixed else ""


def _case_frame(ok, keys):
    """One row per case: its keys, norm:impl, every scalar metric as a column, and `time` = the case's
    statistic (time_median or time_min)."""
    import pandas as pd

    scalar = ok if "tensor" not in ok.columns else ok[ok["tensor"].isna()]
    wide = scalar.pivot_table(index="case_id", columns="metric", values="value", aggfunc="first")
    extra = ["stat"] if "stat" in ok.columns and "stat" not in keys else []
    labels = ok.drop_duplicates("case_id").set_index("case_id")[keys + extra + ["norm", "impl"]]
    cases = labels.join(wide).reset_index()
    cases["column"] = cases["norm"] + ":" + cases["impl"]
    stats = cases["stat"] if "stat" in cases.columns else pd.Series("median", index=cases.index)
    cases["time"] = [cases.at[i, f"time_{s}"] for i, s in stats.items()]
    return cases.sort_values(keys + ["column"]).reset_index(drop=True)


def _grid_tables(ok, cases, keys, opts, notes) -> list[Table]:
    """Time and bandwidth grids: one row per shape and settings, one column per norm:impl."""
    import pandas as pd

    from normbench.benches._latency.versus import default_baseline, versus
    from normbench.core.stats import high_spread

    columns = sorted(cases["column"].unique())
    baseline = opts.baseline or default_baseline(ok, set(columns)) or columns[0]
    vs = versus(ok, cases.assign(label=cases["column"]), baseline, keys)
    cases = cases.join(vs)
    time_rows, bw_rows = [], []
    for key, group in cases.groupby(keys, sort=True):
        cells = group.set_index("column")
        row = dict(zip(keys, key, strict=True))
        bw = dict(row)
        for c in columns:
            if c not in cells.index:
                row[c] = bw[c] = "—"
                continue
            r = cells.loc[c]
            row[c] = format_seconds(r["time"]) + (
                " !" if high_spread(r["time_median"], r.get("time_iqr", 0.0)) else ""
            )
            bw[c] = _num(r.get("gbps"), "{:.1f}") + (
                f" ({_copy_cell(r['copy_fraction'], probe=c.startswith('identity:'))})"
                if _has(r, "copy_fraction")
                else ""
            )
        contenders = cells.drop(index=[c for c in cells.index if c.startswith("identity:")])
        if not contenders.empty:
            best = contenders["time"].idxmin()
            row["fastest"] = best
            if baseline in cells.index:
                b = cells.loc[best]
                words = versus_words(b["vs_ratio"], b["vs_lo"], b["vs_hi"])
                row[f"fastest vs {baseline}"] = words + ("" if b["vs_paired"] else " (unpaired)")
        time_rows.append(row)
        bw_rows.append(bw)
    stat = "/".join(sorted(cases["stat"].unique())) if "stat" in cases.columns else "median"
    time_notes = [n for n in notes if n] + [
        f"Time = the {stat} of each case's raw samples; ! = IQR above 10% of the median. fastest vs "
        f"{baseline}: the median of the per-round ratios of times taken in the same paired rounds, with its "
        "95% interval (unpaired: timed apart, a ratio of two times)."
    ]
    bw_notes = [
        "GB/s from the byte model (docs/methodology.md); in brackets the fraction of the copy probe's GB/s, "
        "timed in the same paired rounds as the norm; " + IMPLAUSIBLE + " = implausible (a byte model or "
        "timing error), not a win."
    ]
    return [
        Table(f"Latency: {stat} time per call", pd.DataFrame(time_rows), time_notes, keys),
        Table(
            "Bandwidth: GB/s from the byte model (fraction of the copy probe)",
            pd.DataFrame(bw_rows),
            bw_notes,
            keys,
        ),
    ]


def _head_to_head(cases, keys, notes) -> Table:
    """Per shape, each norm's fastest implementation: "time (impl)"."""
    import pandas as pd

    rows = []
    norms = sorted(cases["norm"].unique(), key=lambda n: (n == "identity", n))
    for key, group in cases.groupby(keys, sort=True):
        row = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        row.update({n: "—" for n in norms})
        for norm, g in group.groupby("norm", sort=True):
            best = g.loc[g["time"].idxmin()]
            label = "" if norm == "identity" else f" ({best['impl']})"
            row[norm] = format_seconds(best["time"]) + label
        rows.append(row)
    notes = [n for n in notes if n] + [
        "Time = the case's statistic of its raw samples (stat); identity = the copy probe (x.clone())."
    ]
    return Table("Norms head to head: fastest implementation of each norm", pd.DataFrame(rows), notes, keys)


def _per_impl(cases, keys) -> Table:
    import pandas as pd

    has_nominal = "nominal_fraction" in cases.columns and cases["nominal_fraction"].notna().any()
    rows = []
    for _, c in cases.iterrows():
        row = {k: c[k] for k in keys}
        row["impl"] = c["column"]
        if has_nominal:
            row["of nominal"] = _num(c.get("nominal_fraction"), "{:.0%}")
        row["peak mem"] = _bytes(c.get("peak_mem"))
        row["first call"] = format_seconds(c["first_call_s"]) if _has(c, "first_call_s") else "—"
        row["compile"] = _compile_cell(c)
        rows.append(row)
    notes = [
        "peak mem = bytes one call allocates above the resident tensors (CPU: torch's allocator only, a "
        "lower bound). compile = the first call of a torch.compile'd implementation (the compilation), "
        "never part of the time; reused = an earlier case of the run compiled that graph."
    ]
    if has_nominal:
        notes.append(
            "'of nominal' = fraction of the vendor's nominal bandwidth (a label, not a measurement)."
        )
    return Table("Per implementation: memory and compile time", pd.DataFrame(rows), notes, [*keys, "impl"])


def _accuracy(ok, cases, keys) -> Table:
    import pandas as pd

    per_tensor = ok[ok["metric"].isin(["err_abs", "err_rel", "err_ratio"]) & ok["tensor"].notna()]
    wide = per_tensor.pivot_table(
        index=["case_id", "tensor"], columns="metric", values="value", aggfunc="first"
    )
    rows = []
    for _, c in cases.iterrows():
        if c["case_id"] not in wide.index.get_level_values(0):
            continue
        t = wide.loc[c["case_id"]]
        row = {k: c[k] for k in keys}
        row["impl"] = c["column"]
        if "y" in t.index:
            row["y max abs"] = f"{t.loc['y', 'err_abs']:.2e}"
            row["y max rel"] = f"{t.loc['y', 'err_rel']:.2e}"
            row["y ratio"] = f"{t.loc['y', 'err_ratio']:.2f}"
        grads = t.drop(index="y", errors="ignore")
        row["worst grad ratio"] = (
            "" if grads.empty else f"{grads['err_ratio'].max():.2f} ({grads['err_ratio'].idxmax()})"
        )
        row["verdict"] = "SUSPECT" if c.get("accuracy_suspect", 0) > 0 else "ok"
        rows.append(row)
    notes = [
        "Errors against a float64 reference of the same norm on the same input and parameters; ratio = "
        "error / PyTorch eager's error in the same dtype (floored at a quarter of the dtype's spacing at "
        "the largest reference value). SUSPECT = some ratio above 2 (flash-attention's criterion)."
    ]
    return Table("Accuracy vs float64", pd.DataFrame(rows), notes, [*keys, "impl"])


def _compile_cell(c) -> str:
    if not _has(c, "compile_s"):
        return ""
    if _has(c, "compile_graphs") and c["compile_graphs"] == 0:
        return "reused"  # an earlier case compiled this shape; the first call was not a compilation
    return format_seconds(c["compile_s"])


def _has(c, name) -> bool:
    import pandas as pd

    return name in c.index and pd.notna(c[name])


def _num(value, fmt: str) -> str:
    import pandas as pd

    return "—" if value is None or pd.isna(value) else fmt.format(value)


def _copy_cell(frac, probe: bool = False) -> str:
    """The fraction of the copy probe's GB/s; above 1 is implausible, except for the copy itself, timed
    against its own probe (the two differ only by noise)."""
    import pandas as pd

    if frac is None or pd.isna(frac):
        return "—"
    return f"{frac:.0%}" + (f" {IMPLAUSIBLE}" if frac > 1 and not probe else "")


def _bytes(n) -> str:
    import pandas as pd

    if n is None or pd.isna(n):
        return "—"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"
