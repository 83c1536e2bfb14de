"""Small CLI conventions: --format is a choice listed in --help (and completes to the same choices),
NORMBENCH_RESULTS is an envvar= option that --help names, completion offers shipped suite names, stored run
ids (`run --resume`: only unfinished ones), git refs and table words, and the terminal width rule."""

from __future__ import annotations

import pytest
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


def _complete(words: str, env: dict | None = None) -> list[str]:
    """What the shell would offer after `words` (bash protocol: the command line, the word to complete)."""
    from normbench.cli import app

    line = words.split(" ")
    env = {"_NORMBENCH_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(line) - 1)}
    result = CliRunner().invoke(app, [], env=env, prog_name="normbench")
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


@pytest.fixture
def two_runs(tmp_path, monkeypatch):
    from _stores import create_store

    for name, suite, started in (
        ("20261201-100000-quick-aaaa", "quick", "2026-12-01T10:00:00"),
        ("20261201-110000-paper-bbbb", "paper", "2026-12-01T11:00:00"),
    ):
        create_store(tmp_path, {"run_id": name, "suite": suite, "started": started})
    (tmp_path / "not-a-run").mkdir()
    monkeypatch.setenv("NORMBENCH_RESULTS", str(tmp_path))
    return tmp_path


def test_completion_of_suites_and_runs(two_runs):
    from normbench.cli._common import complete_runs, complete_suites

    assert "quick" in complete_suites("q") and "paper" not in complete_suites("q")
    newest = ["20261201-110000-paper-bbbb", "20261201-100000-quick-aaaa"]
    assert complete_runs(None, "") == ["latest", "latest:paper", "latest:quick", *newest]
    assert complete_runs(None, "20261201-10") == ["20261201-100000-quick-aaaa"]
    assert complete_runs(None, "latest:q") == ["latest:quick"]
    assert complete_runs(None, "latest,2026") == [f"latest,{r}" for r in newest]  # compare's comma lists


@pytest.mark.parametrize(
    "words",
    [
        "normbench report ",
        "normbench plot ",
        "normbench export ",
        "normbench upgrade ",
        "normbench baseline save ",
        "normbench compare ",
        "normbench compare latest ",
        "normbench compare --baseline ",
    ],
)
def test_every_run_argument_and_option_completes_run_ids(two_runs, words):
    assert {"latest", "latest:quick", "20261201-110000-paper-bbbb"} <= set(_complete(words))


def test_completion_reads_the_results_folder_given_on_the_command_line(two_runs, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("empty")
    assert _complete(f"normbench report --results {elsewhere} ") == ["latest"]


def test_completion_of_bench_kinds_suites_norms_and_choices(two_runs):
    assert {"latency", "jacobian", "stability"} <= set(_complete("normbench run --bench "))
    assert "latency" in _complete("normbench report --bench l")
    assert "quick" in _complete("normbench run q") and "quick" in _complete("normbench validate q")
    assert "layernorm:module" in _complete("normbench run --norms layer")
    assert "rmsnorm,layernorm:module" in _complete("normbench run --norms rmsnorm,layernorm:m")
    assert _complete("normbench run --executor ") == ["local", "ray"]
    assert _complete("normbench baseline s") == ["save", "show"]


def test_resume_completes_only_runs_with_cases_left(two_runs):
    from _stores import create_store

    create_store(two_runs, {"run_id": "20261201-120000-quick-cccc", "suite": "quick", "status": "complete"})
    create_store(
        two_runs, {"run_id": "20261201-130000-quick-dddd", "suite": "quick", "status": "interrupted"}
    )
    offered = _complete("normbench run --resume ")
    assert "20261201-130000-quick-dddd" in offered and "20261201-120000-quick-cccc" not in offered
    assert "20261201-120000-quick-cccc" in _complete("normbench report ")


def test_ab_completes_git_refs_and_report_table_words(two_runs):
    import subprocess

    branch = subprocess.run(
        ["git", "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    offered = _complete("normbench ab ")
    assert "HEAD~1" in offered
    if branch and branch != "HEAD":  # a checkout on a branch (not a detached CI checkout) offers it
        assert branch in offered
    assert {"latency", "head", "accuracy"} <= set(_complete("normbench report --table "))
    assert _complete("normbench report --table jac") == ["jacobian"]


def test_ab_format_help_and_completion_agree():
    text = " ".join(CliRunner().invoke(app, ["ab", "--help"], env={"COLUMNS": "200"}).stdout.split())
    assert "github|plain|md|json" in text
    assert _complete("normbench ab main --format ") == ["github", "plain", "md", "json"]


def test_terminal_width_outside_a_terminal(monkeypatch):
    from normbench.cli._common import terminal_width

    monkeypatch.delenv("COLUMNS", raising=False)
    assert terminal_width() == 120  # a pipe, a CI log
    monkeypatch.setenv("COLUMNS", "90")
    assert terminal_width() == 90
