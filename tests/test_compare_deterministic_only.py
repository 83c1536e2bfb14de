"""`compare --deterministic-only` gates what holds across CI jobs: no timing is judged (a timed case is compared
by its status), a deterministic change still fails; `--markdown` writes a pull-request comment of the rows that
changed."""

from __future__ import annotations

import json

from _compare_support import LATENCY_IMPLS, store_run
from typer.testing import CliRunner

from normbench.cli import app
from normbench.core.comment import ROW_CHARS


def _compare(root, *args):
    return CliRunner().invoke(app, ["compare", "base", "new", "--results", str(root), *args])


def test_timings_are_left_out_and_deterministic_changes_still_fail(tmp_path):
    medians = {impl: 1e-5 for impl in LATENCY_IMPLS[:2]}
    store_run(tmp_path, "base", latency=medians)
    slower = {**medians, LATENCY_IMPLS[0]: 3e-5}
    store_run(tmp_path, "new", latency=slower, rel_err={("rmsnorm", 0.0): [1e-9, 1e-9]})
    timed = json.loads(_compare(tmp_path, "--format", "json").stdout)
    assert any(r["metric"] == "time_vs_ref" for r in timed["regressions"])
    done = _compare(tmp_path, "--format", "json", "--deterministic-only", "--markdown", tmp_path / "c.md")
    data = json.loads(done.stdout)
    assert done.exit_code == 1 and {r["metric"] for r in data["regressions"]} == {"rel_err"}
    assert not any(r["metric"].startswith("time") for r in data["records"])
    text = (tmp_path / "c.md").read_text()
    assert "### normbench compare: regression" in text and "> [!CAUTION]" in text
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert max(len(r) for r in rows) <= ROW_CHARS and "| = |" not in text  # only what changed


def test_deterministic_only_with_absolute_is_bad_input(tmp_path):
    store_run(tmp_path, "base")
    store_run(tmp_path, "new")
    done = _compare(tmp_path, "--deterministic-only", "--absolute")
    assert done.exit_code == 2 and "--deterministic-only gates no time" in done.stderr


def test_unchanged_values_pass_whatever_the_timings_did(tmp_path):
    """Main's block on unchanged code: every timed case is compared by its status (not `x`), exit 0."""
    medians = {impl: 1e-5 for impl in LATENCY_IMPLS[:2]}
    store_run(tmp_path, "base", latency=medians)
    store_run(tmp_path, "new", latency={k: v * 1.4 for k, v in medians.items()}, jitter=0.05)
    done = _compare(tmp_path, "--format", "json", "--deterministic-only")
    data = json.loads(done.stdout)
    assert done.exit_code == 0 and data["counts"]["x"] == 0, data["not_compared"]
    notes = {r["note"] for r in data["records"] if r["bench"] == "latency"}
    assert notes == {"ok in both runs; timings not gated (--deterministic-only): status compared"}
