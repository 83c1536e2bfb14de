"""Report tables of the latency bench, one row per shape and settings ("512×1024 bf16 fwd"; what every
row shares is the caption), every column of times in one unit.

Details: docs/methodology.md, "The report's tables"."""

from __future__ import annotations

import pandas as pd

from normbench.benches._latency.cases import fixed_words, latency_cases, shape_words
from normbench.benches._latency.notes import process_notes, without_exact
from normbench.core.tables import BYTES, Table, column_unit, in_unit, versus_words

IMPLAUSIBLE = "⚠ above copy"
ROW = "shape"  # the key column: "512×1024 bf16 fwd"; settings every row shares are in the caption


def latency_tables(frame, opts) -> list[Table]:
    found = latency_cases(frame, opts)
    if found is None:
        return []
    ok, keys = found.ok, found.keys
    cases = found.cases.assign(**{ROW: [shape_words(k) for k in found.cases[keys].to_dict("records")]})
    caption = fixed_words(found.fixed)
    notes = [f"Machine: {opts.machine}." if opts.machine else "", *process_notes(ok, cases)]
    if unjudged := without_exact(ok):
        notes.append(f"No float64 reference, so no accuracy rows (the norm declares none): {unjudged}.")
    notes = [n for n in notes if n]
    grid = _grid(cases)
    tables = [*_grid_tables(grid, cases, found.baseline, notes), _head_to_head(grid, cases, notes)]
    tables.append(_per_impl(cases))
    if "err_abs" in set(ok["metric"]):
        tables.append(_accuracy(ok, cases))
    for table in tables:
        table.caption = caption
    return tables


def _grid(cases) -> dict[str, dict[str, dict]]:
    """{row name: {norm:impl: the case as a dict}}, rows in the cases' order (plain dicts: a table of a
    few hundred cells is read cell by cell)."""
    grid: dict[str, dict[str, dict]] = {}
    for case in cases.to_dict("records"):
        grid.setdefault(case[ROW], {})[case["label"]] = case
    return grid


def _time_cells(values, spread) -> tuple[str, list[str]]:
    """One column of times in one unit (from its median): the unit and the cells, to 3 significant
    figures (2 where the case's spread is above 10%, marked !)."""
    unit, scale = column_unit(values)
    cells = [
        in_unit(v, scale, 2 if s else 3) + (" !" if s else "") for v, s in zip(values, spread, strict=True)
    ]
    return unit, cells


def _grid_tables(grid, cases, baseline, notes) -> list[Table]:
    """Time and bandwidth grids: one row per shape and settings, one column per norm:impl."""
    columns = sorted(cases["label"].unique())
    time_rows = [{ROW: name} for name in grid]
    bw_rows = [{ROW: name} for name in grid]
    for c in columns:
        cells = [row.get(c) for row in grid.values()]
        times = [r["time"] if r else None for r in cells]
        spread = [bool(r["high_spread"]) if r else False for r in cells]
        unit, shown = _time_cells(times, spread)
        for row, cell in zip(time_rows, shown, strict=True):
            row[f"{c} ({unit})"] = cell
        for row, r in zip(bw_rows, cells, strict=True):
            row[c] = _bandwidth_cell(r, probe=c.startswith("identity:"))
    for row, by_label in zip(time_rows, grid.values(), strict=True):
        contenders = [r for r in by_label.values() if r["norm"] != "identity"]
        if not contenders:
            continue
        best = min(contenders, key=lambda r: r["time"])
        row["fastest"] = best["label"]
        if baseline is not None:
            words = versus_words(best["vs_ratio"], best["vs_lo"], best["vs_hi"])
            unpaired = words != "—" and not best["vs_paired"]
            words = "the reference" if best["label"] == baseline else words
            row[f"fastest vs {baseline}"] = words + (" (unpaired)" if unpaired else "")
    stat = "/".join(sorted(cases["stat"].unique())) if "stat" in cases.columns else "median"
    time_notes = [
        *notes,
        f"Time = the {stat} of each case's raw samples, in the column's unit, to 3 significant figures (2 "
        "where marked !: the case's spread is above 10%, from the 95% interval of its paired ratio, else its "
        f"IQR). fastest vs {baseline}: the median of the per-round ratios of times taken in the same paired "
        + (
            f"rounds in each of {int(k)} fresh processes, the median over processes with its 95% interval over "
            "processes (where a rerun lands)"
            if (k := cases["processes"].max() if "processes" in cases else 1) > 1
            else "rounds, with its 95% interval"
        )
        + " (unpaired: timed apart, a ratio of two times).",
    ]
    bw_notes = [
        "GB/s from the byte model (docs/methodology.md); in parentheses the fraction of the copy probe's GB/s, "
        "timed in the same paired rounds as the norm; " + IMPLAUSIBLE + " = implausible (a byte model or "
        "timing error), not a win."
    ]
    return [
        Table(f"Latency: {stat} time per call", pd.DataFrame(time_rows), time_notes, [ROW]),
        Table(
            "Bandwidth: GB/s from the byte model (fraction of the copy probe)",
            pd.DataFrame(bw_rows),
            bw_notes,
            [ROW],
        ),
    ]


def _bandwidth_cell(r: dict | None, probe: bool) -> str:
    if not r:
        return "—"
    text = in_unit(r.get("gbps"), 1.0)
    if _has(r, "copy_fraction"):
        text += f" ({_copy_cell(r['copy_fraction'], probe=probe)})"
    return text


def _head_to_head(grid, cases, notes) -> Table:
    """Per shape, each norm's fastest implementation: "time (impl)", one unit per norm's column."""
    # the norms timed at the most shapes first: a narrow terminal splits the table into parts, and its first
    # part should hold the norms a reader can compare everywhere (quick: layernorm and rmsnorm), not the
    # alphabet's first
    shapes = {
        n: sum(any(r["norm"] == n for r in by.values()) for by in grid.values())
        for n in cases["norm"].unique()
    }
    norms = sorted(shapes, key=lambda n: (n == "identity", -shapes[n], n))
    table = [{ROW: name} for name in grid]
    for norm in norms:
        best = []
        for by_label in grid.values():
            mine = [r for r in by_label.values() if r["norm"] == norm]
            best.append(min(mine, key=lambda r: r["time"]) if mine else None)
        unit, shown = _time_cells([b["time"] if b else None for b in best], [False] * len(best))
        for row, b, cell in zip(table, best, shown, strict=True):
            row[f"{norm} ({unit})"] = cell + ("" if b is None or norm == "identity" else f" ({b['impl']})")
    notes = [
        *notes,
        "Time = the case's statistic of its raw samples (stat), in the column's unit; identity = the copy "
        "probe (x.clone()).",
    ]
    return Table("Norms head to head: fastest implementation of each norm", pd.DataFrame(table), notes, [ROW])


def _per_impl(cases) -> Table:
    """Per case: peak memory, first call and compile time, each column in one unit."""
    has_nominal = "nominal_fraction" in cases.columns and cases["nominal_fraction"].notna().any()
    table = pd.DataFrame({ROW: cases[ROW], "impl": cases["label"]})
    if has_nominal:
        table["of nominal"] = [_num(v, "{:.0%}") for v in cases["nominal_fraction"]]
    for name, values, units in (
        ("peak mem", cases.get("peak_mem"), BYTES),
        ("first call", cases.get("first_call_s"), None),
    ):
        values = values if values is not None else [None] * len(cases)
        unit, scale = column_unit(values, units) if units else column_unit(values)
        table[f"{name} ({unit})"] = [in_unit(v, scale) for v in values]
    compiled = cases.get("compile_s")
    if compiled is not None and compiled.notna().any():
        reused = cases.get("compile_graphs", pd.Series(None, index=cases.index)) == 0
        # reused: an earlier case compiled this shape; its first call was not a compilation
        unit, scale = column_unit(compiled[~reused])
        table[f"compile ({unit})"] = [
            "reused" if r else ("" if pd.isna(v) else in_unit(v, scale))
            for v, r in zip(compiled, reused, strict=True)
        ]
    notes = [
        "peak mem = bytes one call allocates above the resident tensors (CPU: torch's allocator only, a "
        "lower bound). compile = the first call of a torch.compile'd implementation (the compilation), "
        "never part of the time; reused = an earlier case of the run compiled that graph."
    ]
    if has_nominal:
        notes.append(
            "'of nominal' = fraction of the vendor's nominal bandwidth (a label, not a measurement)."
        )
    return Table("Per implementation: memory and compile time", table, notes, [ROW, "impl"])


def _accuracy(ok, cases) -> Table:
    per_tensor = ok[ok["metric"].isin(["err_abs", "err_rel", "err_ratio"]) & ok["tensor"].notna()]
    errors: dict[str, dict[str, dict]] = {}  # case_id -> tensor -> {err_abs, err_rel, err_ratio}
    for r in per_tensor[["case_id", "tensor", "metric", "value"]].itertuples(index=False):
        errors.setdefault(r.case_id, {}).setdefault(r.tensor, {}).setdefault(r.metric, r.value)
    rows = []
    for c in cases.to_dict("records"):
        tensors = errors.get(c["case_id"])
        if not tensors:
            continue
        row = {ROW: c[ROW], "impl": c["label"]}
        if y := tensors.get("y"):
            row["y max abs"] = f"{y.get('err_abs', float('nan')):.2e}"
            row["y max rel"] = f"{y.get('err_rel', float('nan')):.2e}"
            row["y ratio"] = f"{y.get('err_ratio', float('nan')):.2f}"
        grads = {t: e["err_ratio"] for t, e in tensors.items() if t != "y" and "err_ratio" in e}
        worst = max(sorted(grads), key=grads.get) if grads else None  # a tie: the first by name
        row["worst grad ratio"] = f"{grads[worst]:.2f} ({worst})" if worst else ""
        row["verdict"] = "SUSPECT" if (c.get("accuracy_suspect") or 0) > 0 else "ok"
        rows.append(row)
    notes = [
        "Errors against a float64 reference of the same norm on the same input and parameters; ratio = "
        "error / PyTorch eager's error in the same dtype (floored at a quarter of the dtype's spacing at "
        "the largest reference value). SUSPECT = some ratio above 2 (flash-attention's criterion)."
    ]
    return Table("Accuracy vs float64", pd.DataFrame(rows), notes, [ROW, "impl"])


def _has(c, name) -> bool:
    value = c.get(name)
    return value is not None and pd.notna(value)


def _num(value, fmt: str) -> str:
    return "—" if value is None or pd.isna(value) else fmt.format(value)


def _copy_cell(frac, probe: bool = False) -> str:
    """The fraction of the copy probe's GB/s; above 1 is implausible, except for the copy itself, timed
    against its own probe (the two differ only by noise)."""
    if frac is None or pd.isna(frac):
        return "—"
    return f"{frac:.0%}" + (f" {IMPLAUSIBLE}" if frac > 1 and not probe else "")
