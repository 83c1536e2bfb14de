"""The report's summary and terminal view on a stored run with known numbers: the summary's form is pinned
by a golden file (tests/golden/summary.txt), every line fits the width, the default view fits 80 lines,
--full/--bench/--table/--columns choose what is shown, and md/json carry the summary too."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _stores import create_store
from typer.testing import CliRunner

from normbench.cli import app
from normbench.core.case import Case, case_id
from normbench.results.store import RunStore

GOLDEN = Path(__file__).parent / "golden" / "summary.txt"
ENV = {"hostname": "h", "cpu": "AMD EPYC", "cpu_count": 2, "torch": "2.13.0+cpu", "torch_threads": 2}
# latency: (norm, impl) -> median time per shape (µs) at hidden 256 and 1024; the copy probe's time beside it
TIMES = {
    ("layernorm", "module"): (40.0, 120.0),
    ("layernorm", "functional"): (32.0, 125.0),
    ("rmsnorm", "module"): (50.0, 100.0),
    ("identity", "copy"): (8.0, 30.0),
}


def _case(store, kind, norm, impl, params, rows, status="ok", error=None):
    case = Case(kind, norm, impl, params, 0, case_id(kind, norm, impl, params))
    store.write_case(case, rows, status, error)


def _latency(store):
    for (norm, impl), times in TIMES.items():
        for hidden, us in zip((256, 1024), times, strict=True):
            t = us * 1e-6
            copy = TIMES[("identity", "copy")][hidden == 1024] * 1e-6
            rows = [{"metric": m, "unit": "s", "value": t} for m in ("time_median", "time_min")]
            rows += [
                {"metric": "time_iqr", "unit": "s", "value": t * (0.2 if impl == "functional" else 0.01)},
                {"metric": "copy_fraction", "unit": "ratio", "value": copy / t},
                {"metric": "gbps", "unit": "GB/s", "value": 512 * hidden * 8 / t / 1e9},
                {"metric": "above_copy", "unit": "bool", "value": float(copy / t > 1)},
                {
                    "metric": "accuracy_suspect",
                    "unit": "bool",
                    "value": float(norm == "rmsnorm" and hidden == 1024),
                },
            ]
            params = {
                "tokens": 512,
                "d": hidden,
                "dtype": "fp32",
                "mode": "fwd",
                "stat": "median",
                "device": "cpu",
                "cache": "warm",
            }
            _case(store, "latency", norm, impl, params, rows)
    params = {"tokens": 512, "d": 256, "dtype": "fp32", "mode": "fwd", "stat": "median"}
    why = "apex.normalization not importable: ModuleNotFoundError: No module named 'apex'"
    for norm in ("layernorm", "rmsnorm"):
        _case(store, "latency", norm, "apex", params, [], "unavailable", why)


def _stability(store):
    for placement, depth, seed, loss, status in [
        ("pre", 6, 0, 2.31, "ok"),
        ("pre", 6, 1, 2.33, "ok"),
        ("post", 6, 0, 2.44, "ok"),
        ("post", 12, 0, 2.94, "stuck"),
        ("post", 12, 1, 2.95, "stuck"),
    ]:
        rows = [
            {"metric": "final_loss", "unit": "nats", "value": loss},
            {"metric": "unigram_loss", "unit": "nats", "value": 2.95},
            {"metric": "model_update", "unit": "1", "value": 1.0, "step": 1},
            {"metric": "grad_norm", "unit": "1", "value": 0.5, "step": 1, "site": "block", "layer": depth},
        ]
        params = {
            "placement": placement,
            "init": "xavier",
            "depth": depth,
            "seed": seed,
            "steps": 40,
            "d": 64,
        }
        reason = "held-out loss vs the unigram model's" if status == "stuck" else None
        _case(store, "stability", "layernorm", "module", params, rows, status, reason)


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    root = tmp_path_factory.mktemp("summary")
    store = create_store(root, {"run_id": "r1", "suite": "golden", "env": ENV})
    _latency(store)
    _stability(store)
    return root


def test_golden_summary(stored):
    """The summary's form: section names, the answer per bench kind, what to distrust, the cases not ok."""
    from normbench.analysis.summary import build_summary, summary_text

    store = RunStore.open(stored, "r1")
    text = "\n".join(summary_text(build_summary(store.read(), [store.manifest]), 120)) + "\n"
    if os.environ.get("NORMBENCH_UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()


def test_summary_numbers_are_the_tables(stored):
    """The fastest implementation and its speedup come from the same numbers as the latency grid."""
    result = CliRunner().invoke(app, ["report", "r1", "--results", str(stored)], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    summary = result.stdout.split("\n\n")[0]
    # hidden 256: layernorm:functional 32 µs, layernorm:module 40 µs -> 1.25x; copy 8 µs -> 25%
    assert "per shape: fastest, its time, GB/s as % of the copy probe's, vs layernorm:module" in summary
    assert "512×256   layernorm:functional  32 µs   25%  1.25× faster (unpaired)" in summary
    assert "512×1024  rmsnorm:module        100 µs  30%  1.2× faster (unpaired)" in summary
    grid = result.stdout.split("### Latency: median time per call")[1].split("\n\n")[1]
    assert "| 512×256  " in grid and "1.25× faster" in grid  # the same numbers in the table
    assert "accuracy SUSPECT" in summary and "rmsnorm:module (1)" in summary
    assert "not all ok (ok/stuck/diverged): post 12 0/2/0" in summary


@pytest.mark.parametrize("width", [60, 120])
def test_every_line_fits_the_width_and_the_budget(stored, width):
    result = CliRunner().invoke(app, ["report", "r1", "--results", str(stored)], env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(map(len, lines)) <= width
    assert len(lines) <= 80
    assert lines[0] == "Summary" and len(lines[: lines.index("")]) <= 26


def test_full_bench_table_and_columns(stored):
    run = ["report", "r1", "--results", str(stored), "-f", "plain"]
    full = CliRunner().invoke(app, [*run, "--full"]).stdout
    assert "fastest vs layernorm:module" in full and "Time = the median" in full  # notes kept
    only = CliRunner().invoke(app, [*run, "--bench", "stability"]).stdout
    assert "Stability:" in only and "Latency:" not in only and "latency " not in only.split("\n\n")[0]
    table = CliRunner().invoke(app, [*run, "--table", "bandwidth"]).stdout
    assert table.startswith("Bandwidth: GB/s") and "Summary" not in table
    cols = CliRunner().invoke(app, [*run, "--table", "latency:", "--columns", "rmsnorm*"]).stdout
    assert "rmsnorm:\n" in cols and "(µs)" in cols and "100\n" in cols
    assert "layernorm" not in cols and "fastest" not in cols
    bad = CliRunner().invoke(app, [*run, "--table", "nosuch"])
    assert bad.exit_code == 2 and "no table title contains it" in bad.stderr


def test_summary_in_md_and_json(stored):
    md = CliRunner().invoke(app, ["report", "r1", "--results", str(stored), "-f", "md"]).stdout
    summary = md.split("## Summary\n\n```text\n")[1].split("```")[0]  # the terminal's lines, aligned
    assert "512×256   layernorm:functional  32 µs   25%  1.25× faster (unpaired)" in summary
    data = json.loads(
        CliRunner().invoke(app, ["report", "r1", "--results", str(stored), "-f", "json"]).stdout
    )
    sections = {line["section"] for line in data["summary"]}
    assert {"run", "latency", "stability", "not ok"} <= sections and data["records"]


def test_not_ok_reasons_that_differ_only_in_numbers_are_one_line():
    """Twelve stuck runs each carry their own loss in the reason: one line counts them, not twelve."""
    import pandas as pd

    from normbench.analysis.summary import _not_ok_lines

    rows = [
        {
            "case_id": f"c{k}",
            "status": "stuck",
            "norm": norm,
            "impl": "module",
            "error": f"held-out loss {2.94 + k / 1000:.3f} vs the unigram model's 2.937 nats",
        }
        for k, norm in enumerate(["dyt", "dyt", "layernorm"])
    ] + [{"case_id": "c9", "status": "failed", "norm": "rmsnorm", "impl": "apex", "error": "no kernel"}]
    lines = _not_ok_lines(pd.DataFrame(rows))
    assert lines == [
        "1 failed: rmsnorm:apex (no kernel)",
        "3 stuck: dyt:module ×2, layernorm:module (e.g. held-out loss 2.940 vs the unigram model's 2.937 nats)",
    ]
