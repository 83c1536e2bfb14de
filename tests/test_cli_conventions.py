"""Small CLI conventions: --format is a choice listed in --help, NORMBENCH_RESULTS is an envvar= option that
--help names, completion offers shipped suite names and stored run ids, and the terminal width rule."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from normbench.cli import app


def test_help_lists_format_choices_and_the_results_envvar():
    for command, choices in (("report", "github|plain|md|latex|csv|json"), ("plot", "png|svg|pdf")):
        text = " ".join(CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"}).stdout.split())
        assert choices in text and "NORMBENCH_RESULTS" in text


def test_results_envvar_is_read(tiny_run):
    results, run_id = tiny_run
    listed = CliRunner().invoke(app, ["list", "runs"], env={"NORMBENCH_RESULTS": str(results)})
    assert listed.exit_code == 0 and run_id in listed.stdout


def test_completion_of_suites_and_runs(tmp_path, monkeypatch):
    from normbench.cli._common import complete_runs, complete_suites

    assert "quick" in complete_suites("q") and "paper" not in complete_suites("q")
    for name in ("20261201-100000-quick-aaaa", "20261201-110000-paper-bbbb"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text(json.dumps({"run_id": name}))
    (tmp_path / "not-a-run").mkdir()
    monkeypatch.setenv("NORMBENCH_RESULTS", str(tmp_path))
    assert complete_runs("") == ["latest", "20261201-110000-paper-bbbb", "20261201-100000-quick-aaaa"]
    assert complete_runs("20261201-10") == ["20261201-100000-quick-aaaa"]


def test_terminal_width_outside_a_terminal(monkeypatch):
    from normbench.cli._common import terminal_width

    monkeypatch.delenv("COLUMNS", raising=False)
    assert terminal_width() == 120  # a pipe, a CI log
    monkeypatch.setenv("COLUMNS", "90")
    assert terminal_width() == 90
