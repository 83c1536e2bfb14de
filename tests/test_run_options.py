"""Every parameter of `normbench run` reaches RunOptions by its name: a flag renamed on one side and not the
other is an error when the command runs (and here), never an option dropped silently."""

from __future__ import annotations

import inspect
from dataclasses import fields

import pytest

from normbench.cli import run as run_command
from normbench.executors.service import RunOptions


def test_the_command_s_parameters_are_the_fields_of_run_options():
    params = set(inspect.signature(run_command.command).parameters) - {"ctx", "suite"}
    parsed = {"bench_flags"}  # the command class's (cli/_bench_flags.py), not a declared parameter
    assert params == {f.name for f in fields(RunOptions)} - parsed


def test_a_parameter_without_a_field_is_an_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'renamed_flag'"):
        RunOptions.of({"results": ".", "suite": "quick", "renamed_flag": True})
    assert RunOptions.of({"results": ".", "suite": "quick", "threads": 2}).threads == 2


def test_a_dry_run_passes_every_option_through(cli, tmp_path, tiny_suite):
    (tmp_path / "s.toml").write_text(tiny_suite())
    done = cli(
        "run", tmp_path / "s.toml", "--dry-run", "--threads", "2", "--pages", "base", "-r", tmp_path / "r"
    )
    assert done.exit_code == 0, done.output


def test_threads_are_resolved_into_the_plan_as_pages_are(tmp_path, tiny_suite):
    from normbench.executors.session import plan_run

    (tmp_path / "s.toml").write_text("threads = 3\n" + tiny_suite())
    plan = lambda **kw: plan_run(  # noqa: E731
        str(tmp_path / "s.toml"), tmp_path, resume=None, shard=None, only=None, say=print, **kw
    )
    assert plan().threads == 3 and plan(threads=2).threads == 2  # the suite's, else the option
    assert plan(pages="base").pages == "base"
