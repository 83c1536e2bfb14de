"""The report as data: csv/json are numeric records that pandas and json read whole; LaTeX is pure ASCII (and compiles where pdflatex is installed); warnings come first; a wrong --speedup-vs is an error (--baseline, its former name, still works); swept latency parameters are row keys."""

from __future__ import annotations

import io
import json
import shutil

import pandas as pd
import pytest
from _dataset_support import KINDS
from _stores import create_store
from typer.testing import CliRunner

from normbench.cli import app
from normbench.results.store import RunStore


@pytest.fixture
def runs(dataset_runs):
    return dataset_runs


def test_report_csv_and_json_are_numeric_records(runs):
    results, mixed, _ = runs

    result = CliRunner().invoke(app, ["report", mixed, "--format", "csv", "--results", str(results)])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(io.StringIO(result.stdout))
    # the cases' records, then the trade-off record the stability and block rows give (analysis/derived.py)
    assert set(frame["bench"]) == {*KINDS, "tradeoff"}
    assert frame.loc[frame["bench"] == "tradeoff", "final_loss_mean"].notna().all()
    latency = frame[frame["bench"] == "latency"]
    assert len(latency) == 4 and latency["case_id"].is_unique  # one record per latency case
    for column in ("time_s", "time_median_s", "time_iqr_s", "gbps", "speedup_vs_baseline", "err_abs_y"):
        assert frame[column].dtype == "float64", column
    stored = RunStore.open(results, mixed).read()
    medians = stored[(stored["bench"] == "latency") & (stored["metric"] == "time_median")]
    medians = medians.set_index("case_id")["value"]
    assert latency.set_index("case_id")["time_median_s"].to_dict() == pytest.approx(medians.to_dict())
    as_json = CliRunner().invoke(app, ["report", mixed, "--format", "json", "--results", str(results)])
    doc = json.loads(as_json.stdout)
    assert len(doc["records"]) == len(frame) and doc["runs"] == [mixed]
    assert all(isinstance(r["time_s"], float) for r in doc["records"] if r["bench"] == "latency")


def test_latex_is_pure_ascii(runs):
    results, mixed, _ = runs
    result = CliRunner().invoke(app, ["report", mixed, "--format", "latex", "--results", str(results)])
    assert result.exit_code == 0, result.output
    assert result.stdout.isascii() and "\\begin{tabular}" in result.stdout
    assert "\\textmu{}s" in result.stdout or " ms" in result.stdout


def test_latex_compiles_when_pdflatex_is_installed(runs, tmp_path):
    import subprocess

    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex not installed (test_latex_is_pure_ascii checks the escaping)")
    results, mixed, _ = runs
    body = CliRunner().invoke(app, ["report", mixed, "--format", "latex", "--results", str(results)]).stdout
    (tmp_path / "r.tex").write_text(
        "\\documentclass{article}\\usepackage{textcomp}\\begin{document}\n" + body + "\\end{document}\n"
    )
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "r.tex"], cwd=tmp_path, capture_output=True
    )
    assert done.returncode == 0, done.stdout[-2000:]


def test_unknown_baseline_is_an_error_listing_the_implementations(runs):
    results, mixed, _ = runs
    result = CliRunner().invoke(
        app, ["report", mixed, "--baseline", "layernorm:modul", "--results", str(results)]
    )
    assert result.exit_code == 2
    line = result.stderr.splitlines()[0]
    assert line.startswith(
        "error: --speedup-vs 'layernorm:modul' is not in the run (did you mean 'layernorm:module'?)"
    )
    assert "layernorm:module, rmsnorm:module" in line


def test_speedup_vs_keeps_its_former_name_hidden(runs):
    results, mixed, _ = runs
    invoke = lambda *a: CliRunner().invoke(app, ["report", mixed, *a, "-f", "csv", "--results", str(results)])  # noqa: E731
    new, old = invoke("--speedup-vs", "rmsnorm:module"), invoke("--baseline", "rmsnorm:module")
    assert new.exit_code == old.exit_code == 0 and new.stdout == old.stdout
    assert new.stdout != invoke().stdout  # the reference changed the speedup column
    shown = CliRunner().invoke(app, ["report", "--help"], env={"COLUMNS": "200"}).stdout
    assert "--speedup-vs" in shown and "--baseline" not in shown


def test_warnings_come_first(runs, tmp_path):
    """Incomplete run and cases stored in two runs: said before any table, in every format."""
    results, mixed, latency = runs
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    stored = RunStore.open(copy, mixed).read()
    (stability,) = stored.loc[stored["bench"] == "stability", "case_id"].unique()
    (copy / mixed / "parts" / f"{stability}.parquet").unlink()  # not one of the 4 shared latency cases
    planned = len(RunStore.open(copy, mixed).manifest["cases"])
    result = CliRunner().invoke(app, ["report", mixed, latency, "--format", "plain", "--results", str(copy)])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.startswith("Summary\n")  # the summary opens with the runs, then the warnings, wrapped whole
    flat = " ".join(text.split())
    assert f"run {mixed} is incomplete: 1 of {planned} planned cases have no row" in flat
    assert "4 case(s) are stored in more than one of the runs" in flat
    assert next(ln for ln in text.splitlines()[1:] if not ln.startswith((" ", "run "))).startswith("warning ")
    full = CliRunner().invoke(
        app, ["report", mixed, latency, "--full", "-f", "plain", "--results", str(copy)]
    )
    assert full.stdout.index("\nWarnings\n") < full.stdout.index("Latency:")
    csv = CliRunner().invoke(app, ["report", mixed, "--format", "csv", "--results", str(copy)])
    assert "is incomplete: 1 of" in csv.stderr and "incomplete" not in csv.stdout


def test_swept_latency_parameters_become_row_keys(tmp_path):
    """eps and seed swept in a latency bench: one row per value, not a crash in the grid."""
    from normbench.analysis.report import build_tables
    from normbench.core.case import Case, case_id

    store = create_store(tmp_path, {"run_id": "r"})
    for eps in (1e-5, 1e-6):
        for seed in (0, 1):
            for impl, t in (("module", 1e-5), ("functional", 2e-5)):
                params = {
                    "tokens": 8,
                    "d": 16,
                    "eps": eps,
                    "seed": seed,
                    "dtype": "fp32",
                    "stat": "median",
                }
                case = Case(
                    "latency", "layernorm", impl, params, 0, case_id("latency", "layernorm", impl, params)
                )
                rows = [{"metric": m, "unit": "s", "value": t} for m in ("time_median", "time_min")]
                rows.append({"metric": "time_iqr", "unit": "s", "value": 0.0})
                store.write_case(case, rows, "ok", None)
    tables = build_tables(store.read(), [store.manifest])
    grid = tables[0].frame
    assert tables[0].title.startswith("Latency") and len(grid) == 4
    # one row per value, named by what is not the default (eps 1e-05 and seed 0 are)
    assert sorted(grid["shape"]) == ["8×16", "8×16 eps=1e-06", "8×16 eps=1e-06 seed=1", "8×16 seed=1"]
    assert set(grid["fastest vs layernorm:module"]) == {"the reference"}  # the fastest is the reference


def test_environment_and_load_warnings_and_the_copy_probe_is_not_above_itself():
    from normbench.analysis.report import report_warnings
    from normbench.benches._latency.report import _copy_cell

    frame = pd.DataFrame(
        {
            "run_id": ["a", "b"],
            "case_id": ["x", "y"],
            "metric": ["loadavg_1m", "loadavg_1m"],
            "value": [1.0, 5.5],
        }
    )
    env = {"hostname": "h", "cpu": "c", "torch": "2.13.0", "cpu_count": 4}
    manifests = [
        {"run_id": "a", "env": env, "cases": [{"case_id": "x"}]},
        {"run_id": "b", "env": {**env, "torch": "2.14.0"}, "cases": [{"case_id": "y"}]},
    ]
    assert report_warnings(frame, manifests) == [
        "busy machine: 1 of 2 cases ran with the 1-minute load above the core count (max 5.5 on 4 cores); "
        "their latencies include time stolen by other processes: rerun on a quiet machine",
        "the combined runs come from different environments (torch: 2.13.0 / 2.14.0)",
    ]
    assert _copy_cell(1.03) == "103% ⚠ above copy" and _copy_cell(1.03, probe=True) == "103%"
