"""The shared guards, each against an independent expectation: control characters are escaped, progress
labels are plain text, the Jacobian bench fails a σ_max off its exact closed form, and the helpers for run
ids, atomic writes and the case cap refuse what they should."""

from __future__ import annotations

import os
import types
from pathlib import Path

import pytest
from _stores import create_store

from normbench.core.errors import NormbenchError, SuiteError, printable


def test_printable_escapes_controls_and_bidi_overrides_only():
    assert printable("a\x1b[31mb\x07c\x9bd\u202ee") == "a\\x1b[31mb\\x07c\\x9bd\\u202ee"
    assert printable("µs σ_max ‖x‖ [/] é") == "µs σ_max ‖x‖ [/] é"
    assert printable("a\nb") == "a\\x0ab" and printable("a\nb", keep_newlines=True) == "a\nb"


def test_progress_label_is_text_not_markup():
    from normbench.cli._progress import CaseColumn

    label = "latency x [/] [bold]y[/bold] z"
    rendered = CaseColumn().render(types.SimpleNamespace(fields={"case": label}))
    assert rendered.plain == label


@pytest.mark.parametrize("run_id", ["../x", "a/b", "a\\b", "/etc", "..", ".", ".hidden", "", "C:x", "a\x1bb"])
def test_run_ids_that_are_paths_are_refused(run_id):
    from normbench.results.paths import check_run_id

    with pytest.raises(NormbenchError, match="is not a run id"):
        check_run_id(run_id)
    assert check_run_id("20261130-190000-quick-ab12") == "20261130-190000-quick-ab12"


def test_atomic_write_leaves_the_old_file_when_the_writer_fails(tmp_path):
    from normbench.results.files import atomic_write, atomic_write_text

    target = tmp_path / "manifest.json"
    atomic_write_text(target, "old")

    def fail(f):
        f.write(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        atomic_write(target, fail)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["manifest.json"]


def test_atomic_write_fsyncs_the_file_before_the_rename_and_the_folder_after(tmp_path, monkeypatch):
    import os

    from normbench.results import files

    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append(("fsync", "folder" if os.path.isdir(f"/proc/self/fd/{fd}") else "file"))
        real_fsync(fd)

    def replace(src, dst):
        events.append(("replace", Path(src).read_bytes()))  # the bytes are whole before they get the name
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "fsync", fsync)
    monkeypatch.setattr(files.os, "replace", replace)
    files.atomic_write_text(tmp_path / "part", "whole")
    assert events == [("fsync", "file"), ("replace", b"whole"), ("fsync", "folder")]


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes to read-only folders"
)
def test_a_read_only_results_folder_is_refused_before_the_first_case(tmp_path, cli, tiny_suite):
    suite = tmp_path / "s.toml"
    suite.write_text(tiny_suite(norms='["identity"]'))
    results = tmp_path / "results"
    results.mkdir(mode=0o555)
    result = cli("run", suite, "--results", results)
    assert result.exit_code == 2 and "cannot create" in result.stderr and not list(results.iterdir())


def test_the_case_cap_counts_before_expanding(monkeypatch):
    from normbench.suite import bench_table, load

    monkeypatch.setattr(bench_table, "MAX_CASES", 5)
    text = 'name = "c"\n[[bench]]\nkind = "latency"\nnorms = ["layernorm:module", "rmsnorm:module"]\n'
    text += "[bench.sweep]\ntokens = [8, 16]\nd = [16, 32]\n"
    with pytest.raises(SuiteError) as info:
        load.parse_suite(text, "c.toml")
    (problem,) = info.value.problems
    assert "expands to 8 cases (this bench: 8 = 2 implementation(s) × 2 tokens × 2 d)" in str(problem)
    assert "the cap is 5" in str(problem)


def test_timeout_s_is_not_part_of_the_case_identity():
    from normbench.suite.expand import expand
    from normbench.suite.load import parse_suite

    base = 'name = "t"\n[[bench]]\nkind = "latency"\nnorms = ["layernorm:module"]\n'
    base += "[bench.params]\ntokens = 8\nd = 16\n"
    plain = expand(parse_suite(base, "t.toml"))
    limited = expand(parse_suite("timeout_s = 30\n" + base, "t.toml"))
    own = expand(parse_suite("timeout_s = 30\n" + base.replace("norms", "timeout_s = 2\nnorms"), "t.toml"))
    assert [c.case_id for c in plain] == [c.case_id for c in limited] == [c.case_id for c in own]
    assert (plain[0].timeout_s, limited[0].timeout_s, own[0].timeout_s) == (None, 30.0, 2.0)


def test_a_jacobian_off_its_closed_form_is_failed_with_both_numbers(monkeypatch):
    """RMSNorm at scale 1e30 in fp32: x² overflows, σ_max comes out 0 against a closed form of ~1e-30.
    With the overflow check switched off, the closed-form check alone must catch it."""
    import torch

    from normbench.benches import RunContext, get_bench
    from normbench.benches import jacobian as bench_module
    from normbench.suite.expand import expand
    from normbench.suite.load import parse_suite

    text = 'name = "j"\n[[bench]]\nkind = "jacobian"\nnorms = ["rmsnorm"]\n'
    text += '[bench.params]\nd = 16\ndtype = "fp32"\nscale = 1e30\ninputs = 2\n'
    (case,) = expand(parse_suite(text, "j.toml"))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    monkeypatch.setattr(bench_module, "check_statistics_fit", lambda *a: None)
    result = get_bench("jacobian").run_case(case, RunContext(threads=1))
    assert result.status == "failed"
    assert result.error.startswith("measured σ_max 0 disagrees with its closed form 1.")
    assert "e-30 (relative error 1 > 0.001 allowed in fp32) on 2 of 2 inputs" in result.error
    monkeypatch.undo()
    try:
        with pytest.raises(FloatingPointError, match="statistics overflow fp32"):
            get_bench("jacobian").run_case(case, RunContext(threads=1))
    finally:
        torch.set_num_threads(threads)


def test_rows_that_cannot_be_stored_make_the_case_failed_and_the_run_goes_on(tmp_path, monkeypatch):
    from normbench import runner
    from normbench.benches import CaseResult, RunContext
    from normbench.executors.local import run_cases
    from normbench.suite.expand import expand
    from normbench.suite.load import parse_suite

    class MixedValues:  # a plugin bench that puts a string where numbers go
        def run_case(self, case, ctx):
            return CaseResult([{"metric": "m", "unit": "1", "value": 1.0}, {"metric": "m", "value": "text"}])

    text = 'name = "r"\n[[bench]]\nkind = "latency"\nnorms = ["layernorm:module"]\n'
    cases = expand(parse_suite(text + "[bench.sweep]\ntokens = [8, 16]\nd = [16]\n", "r.toml"))
    store = create_store(
        tmp_path, {"run_id": "r", "started": "x", "cases": [{"case_id": c.case_id} for c in cases]}
    )
    monkeypatch.setattr(runner, "get_bench", lambda kind: MixedValues())
    outcome = run_cases(store, cases, RunContext(threads=1), session=0, say=lambda s: None)
    assert dict(outcome.statuses) == {"failed": 2}
    frame = store.read()
    assert set(frame["status"]) == {"failed"} and set(frame["case_id"]) == {c.case_id for c in cases}
    assert all(e.startswith("its rows could not be stored: Arrow") for e in frame["error"])


def test_a_long_or_hostile_suite_name_makes_a_short_safe_run_id():
    from normbench.results.paths import check_run_id
    from normbench.results.store import new_run_id

    run_id = new_run_id("x" * 100_000 + "/../\x1b[31m")
    assert check_run_id(run_id) == run_id and len(run_id) < 80
    assert check_run_id(new_run_id("../..")) and new_run_id("../..").split("-")[2] == "suite"
