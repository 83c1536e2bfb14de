"""The report's answer per shape: one summary line per shape (grouped by dtype and mode, ratios in words,
the paired interval) within the first 25 lines, the groups' medians beyond 12 shapes; one unit per table
column; notes wrapped at the width in every format; --bench and --table within the 80-line budget; md
figures only where asked; no path of this machine in a report."""

from __future__ import annotations

import os
import re

import pytest
from _stores import create_store
from typer.testing import CliRunner

from normbench.cli import app
from normbench.core.case import Case, case_id

ENV = {"hostname": "h", "cpu": "AMD EPYC", "cpu_count": 2, "torch": "2.13.0+cpu", "torch_threads": 2}
# norm:impl -> time over the reference's (paired): the reference, a faster, a slower and the copy probe
RATIOS = {"layernorm:module": 1.0, "layernorm:functional": 0.5, "rmsnorm:module": 2.0, "identity:copy": 0.25}


def _store(root, run_id: str, hidden: list[int], source: str = "suite.toml"):
    store = create_store(root, {"run_id": run_id, "suite": "answer", "suite_source": source, "env": ENV})
    for dtype in ("fp32", "bf16"):
        for mode in ("fwd", "fwd+bwd"):
            for d in hidden:
                base = 1e-6 * d * (2 if mode == "fwd+bwd" else 1)
                for label, ratio in RATIOS.items():
                    norm, impl = label.split(":")
                    t = base * ratio
                    rows = [{"metric": m, "unit": "s", "value": t} for m in ("time_median", "time_min")]
                    rows += [
                        {"metric": "time_iqr", "unit": "s", "value": 0.01 * t},
                        {"metric": "copy_fraction", "unit": "ratio", "value": 0.25 / ratio},
                        {"metric": "first_call_s", "unit": "s", "value": 1e-3 * d},
                    ]
                    for stat, f in (("median", 1.0), ("lo", 0.9), ("hi", 1.1)):
                        value = 1.0 if label == "layernorm:module" else ratio * f
                        rows.append({"metric": f"time_vs_ref_{stat}", "unit": "ratio", "value": value})
                    for row in rows:
                        row["reference"] = "layernorm:module"
                    params = {"tokens": 512, "d": d, "dtype": dtype, "mode": mode, "samples": 10}
                    case = Case("latency", norm, impl, params, 0, case_id("latency", norm, impl, params))
                    store.write_case(case, rows, "ok", None)
    why = f"FileNotFoundError: {os.getcwd()}/data/corpus.txt missing"  # a reason quoting a local path
    params = {"tokens": 512, "d": hidden[0], "dtype": "fp32", "mode": "fwd"}
    case = Case("latency", "rmsnorm", "apex", params, 0, case_id("latency", "rmsnorm", "apex", params))
    store.write_case(case, [], "failed", why)
    return store


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    root = tmp_path_factory.mktemp("answer")
    _store(root, "r12", [256, 512, 1024])  # 2 dtypes × 2 modes × 3 widths = 12 shapes
    _store(root, "r16", [256, 512, 1024, 2048], source=str(root / "suite.toml"))  # 16 shapes
    return root


def _report(stored, *args, columns: int = 120):
    result = CliRunner().invoke(
        app, ["report", *args, "--results", str(stored)], env={"COLUMNS": str(columns)}
    )
    assert result.exit_code == 0, result.output
    return result.stdout


def test_every_shape_is_answered_in_the_first_25_lines_with_words(stored):
    lines = _report(stored, "r12").splitlines()
    summary = lines[: lines.index("")]
    assert len(summary) <= 25
    head = "\n".join(summary)
    shape_lines = [line for line in summary if re.search(r"\d+×\d+", line)]
    assert len(shape_lines) == 12
    # grouped: each dtype and mode named once, before its first shape
    assert [g for g in ("bf16 fwd ", "bf16 fwd+bwd", "fp32 fwd ", "fp32 fwd+bwd") if g in head] == [
        "bf16 fwd ",
        "bf16 fwd+bwd",
        "fp32 fwd ",
        "fp32 fwd+bwd",
    ]
    assert "vs layernorm:module (paired, 95% interval)" in head
    # the fastest is layernorm:functional at half the reference's time: 2× faster, its interval inverted
    assert all("layernorm:functional" in line and "2× faster [1.82, 2.22]" in line for line in shape_lines)
    assert "×" not in re.sub(r"\d+×\d+|\d×|\d+\.?\d*× (faster|slower)", "", head.split("distrust")[0])
    assert len(lines) <= 80 and max(map(len, lines)) <= 120


def test_beyond_twelve_shapes_the_groups_medians_and_where_each_shape_is(stored):
    summary = _report(stored, "r16").split("\n\n")[0]
    assert (
        "fp32 fwd (4 shapes): fastest layernorm:functional 4; median 2× faster than layernorm:module"
        in summary
    )
    assert "each of the 16 shapes: `normbench report --table latency`" in summary


def test_one_unit_per_column(stored):
    full = _report(stored, "r12", "--table", "latency:", "--full", "-f", "plain")
    header, *rows = [line for line in full.splitlines() if line.startswith(("shape", "512×"))]
    assert "layernorm:module (µs)" in header and "rmsnorm:module (ms)" in header
    cells = " ".join(rows)
    assert not re.search(r"\d (s|ms|µs|ns)\b", cells)  # numbers only: the unit is the column's
    assert "All rows: samples=10." in full  # the settings every row shares: the caption


def _prose(text: str) -> list[str]:
    """The lines that are not table rows: no cell separators (|, &), no aligned columns (two spaces)."""
    return [
        line
        for line in text.splitlines()
        if not line.startswith(("|", "\\")) and " & " not in line and "  " not in line.strip()
    ]


def test_notes_wrap_at_the_width_in_every_format(stored):
    for fmt in ("md", "plain", "github", "latex"):
        text = _report(stored, "r12", "--full", "-f", fmt, columns=80)
        assert "Time = the median" in text
        long = [line for line in _prose(text) if len(line) > 80]
        assert long == [], (fmt, long[:2])


def test_bench_and_table_keep_the_line_budget(stored):
    for args in (["--bench", "latency"], ["--table", "a"]):
        lines = _report(stored, "r16", *args, columns=80).splitlines()
        assert len(lines) <= 80, args
        assert "Not shown" in lines[-3] or "Not shown" in lines[-2] or "Not shown" in lines[-1]
    assert len(_report(stored, "r16", "--bench", "latency", "--full").splitlines()) > 80


def test_markdown_draws_figures_only_where_asked(stored, tmp_path):
    run_plots = stored / "r12" / "plots"
    text = _report(stored, "r12", "-f", "md")
    assert not run_plots.exists() and "## Figures" not in text
    out = tmp_path / "report.md"
    _report(stored, "r12", "-f", "md", "-o", str(out))
    assert list((tmp_path / "plots").glob("*.png")) and "](plots/" in out.read_text()
    elsewhere = tmp_path / "figs"
    text = _report(stored, "r12", "-f", "md", "--plots", str(elsewhere))
    assert list(elsewhere.glob("*.png")) and not run_plots.exists()
    bad = CliRunner().invoke(app, ["report", "r12", "--results", str(stored), "--plots", str(elsewhere)])
    assert bad.exit_code == 2 and "--plots" in bad.stderr


def test_no_path_of_this_machine_in_a_report(stored):
    for fmt in ("md", "github", "json"):
        text = _report(stored, "r16", "--full", "-f", fmt)
        assert os.getcwd() not in text and str(stored) not in text, fmt
    md = _report(stored, "r16", "-f", "md")
    assert "suite `answer` (suite.toml," in md and "data/corpus.txt missing" in md
