"""A failing case is a stored result, not a crash: raise and NaN are stored failed with the reason (exit 1); skipped cases alone exit 0."""

from __future__ import annotations

import pytest

from normbench.results.store import RunStore

TINY = "samples = 3\nwarmup_calls = 0\nmin_sample_s = 1e-4\nmin_run_s = 0\ncopy_probe = false\n"
CUDA_CASE = f'[[bench]]\nkind = "latency"\nnorms = ["identity"]\n[bench.params]\ntokens = 8\nd = 16\ndevice = "cuda"\n{TINY}'


def _no_cuda() -> bool:
    import torch

    return not torch.cuda.is_available()


needs_no_cuda = pytest.mark.skipif(not _no_cuda(), reason="the skip path needs a machine without CUDA")


def statuses(results) -> dict[tuple[str, str, str], tuple[str, str]]:
    """(norm, impl, device) -> (status, error) per stored case."""
    frame = RunStore.open(results, "latest").read().drop_duplicates("case_id")
    return {
        (r.norm, r.impl, r.device): (r.status, r.error if isinstance(r.error, str) else None)
        for r in frame.itertuples()
    }


@needs_no_cuda
def test_raising_and_nan_impls_are_stored_failed_and_the_run_goes_on(tmp_path, normbench_proc, cli):
    """Test-only norms come in through NORMBENCH_PLUGINS, in a real process as a user's plugin would."""
    (tmp_path / "fail.toml").write_text(
        'name = "failures"\n[[bench]]\nkind = "latency"\nnorms = ["broken", "identity"]\n'
        f"[bench.sweep]\ntokens = [8]\nd = [16]\n[bench.params]\n{TINY}" + CUDA_CASE
    )
    proc = normbench_proc(
        "run",
        "fail.toml",
        "--quiet",
        "--results",
        "results",
        extra_env={"NORMBENCH_PLUGINS": "normbench_test_norms"},
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "2 failed, 1 ok, 1 skipped" in proc.stderr
    raised = "ValueError: deliberately broken kernel for the failure-row test"
    nan = "FloatingPointError: non-finite values (NaN/inf) in the output before timing"
    assert f"  failed: latency broken:raises tokens=8 d=16: {raised}" in proc.stderr.splitlines()
    assert f"  failed: latency broken:nan tokens=8 d=16: {nan}" in proc.stderr.splitlines()

    results = tmp_path / "results"
    assert statuses(results) == {
        ("broken", "raises", "cpu"): ("failed", raised),
        ("broken", "nan", "cpu"): ("failed", nan),
        ("identity", "copy", "cpu"): ("ok", None),  # the case after the failures still ran
        ("identity", "copy", "cuda"): ("skipped", "CUDA is not available on this machine"),
    }
    frame = RunStore.open(results, "latest").read()
    failed = frame[frame["status"] == "failed"]
    bookkeeping = {"case_wall_s", "loadavg_1m", "case_started_unix", "case_finished_unix"}
    assert set(failed["metric"]) <= bookkeeping  # no timing rows for a failed case

    # the report lists them, with reasons
    report = cli("report", "--results", results, "--format", "plain", "--full")
    assert report.exit_code == 0, report.output
    section = report.stdout[report.stdout.index("Cases not ok") :]
    for reason in (raised, nan, "CUDA is not available on this machine"):
        assert reason in section


@needs_no_cuda
def test_skipped_cases_alone_do_not_fail_the_run(tmp_path, cli):
    (tmp_path / "skip.toml").write_text(
        f'name = "skips"\n[[bench]]\nkind = "latency"\nnorms = ["identity"]\n[bench.sweep]\ntokens = [8]\nd = [16]\n'
        f"[bench.params]\n{TINY}" + CUDA_CASE
    )
    result = cli("run", tmp_path / "skip.toml", "--quiet", "--results", tmp_path / "results")
    assert result.exit_code == 0, result.output
    assert "1 ok, 1 skipped" in result.stderr
    assert statuses(tmp_path / "results") == {
        ("identity", "copy", "cpu"): ("ok", None),
        ("identity", "copy", "cuda"): ("skipped", "CUDA is not available on this machine"),
    }


def test_runner_turns_exceptions_into_statuses(tmp_path, monkeypatch):
    """run_one maps each exception to its status and keeps the first line of the message."""
    from normbench.benches import RunContext, all_benches
    from normbench.core.case import Case
    from normbench.core.errors import SkipCase, UnavailableCase
    from normbench.runner import run_one

    bench = all_benches()["latency"]
    case = Case("latency", "identity", "copy", {}, 0, "c0")
    for exc, status, error in [
        (
            RuntimeError("CUDA out of memory.\nTried to allocate 2 GiB"),
            "failed",
            "RuntimeError: CUDA out of memory.",
        ),
        (SkipCase("bf16 on cpu: not implemented"), "skipped", "bf16 on cpu: not implemented"),
        (UnavailableCase("liger_kernel not importable"), "unavailable", "liger_kernel not importable"),
    ]:

        def raise_it(case, ctx, exc=exc):
            raise exc

        monkeypatch.setattr(bench, "run_case", raise_it)
        rows, got_status, got_error = run_one(case, RunContext(threads=1))
        assert (got_status, got_error) == (status, error)
        assert rows[0]["metric"] == "case_wall_s" and rows[0]["value"] >= 0


@pytest.mark.parametrize(
    "value, shown",
    [
        ("1", True),
        ("true", True),
        ("Yes", True),
        ("on", True),
        ("0", False),
        ("false", False),
        ("no", False),
        ("off", False),
        ("", False),
    ],
)
def test_normbench_debug_turns_on_only_when_it_says_so(monkeypatch, capsys, value, shown):
    """NORMBENCH_DEBUG=0 (or false, no, off) keeps a failing case to its one line; 1/true/yes/on print the traceback."""
    from normbench.benches import RunContext, all_benches
    from normbench.core.case import Case
    from normbench.core.errors import debug_enabled
    from normbench.runner import run_one

    monkeypatch.setenv("NORMBENCH_DEBUG", value)
    bench = all_benches()["latency"]

    def raise_it(case, ctx):
        raise RuntimeError("boom")

    monkeypatch.setattr(bench, "run_case", raise_it)
    _, status, error = run_one(Case("latency", "identity", "copy", {}, 0, "c0"), RunContext(threads=1))
    assert (status, error) == ("failed", "RuntimeError: boom")
    assert debug_enabled() is shown
    assert ("Traceback (most recent call last)" in capsys.readouterr().err) is shown
