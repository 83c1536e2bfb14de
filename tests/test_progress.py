"""The run progress: an ETA weighted by what each case is (and by the stored runs when they know it), a
latency round set expected at its first case, the session's pace smoothed, a label cut to one line, a resumed run counted over the whole run, a closing line that counts what this
session ran (even when it was stopped), a status column as wide as every status, a label for every case."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from normbench.cli import _progress
from normbench.cli._eta import SMOOTHING_S, Estimate, prior_seconds, round_sets
from normbench.cli._progress import RunProgress, case_label, log_line
from normbench.core.case import Case, case_id
from normbench.results.history import CaseHistory, case_history


def _case(kind, norm="layernorm", impl="module", swept=(), **params):
    return Case(kind, norm, impl, params, 0, case_id(kind, norm, impl, params), swept=swept)


def test_the_eta_weights_a_training_case_above_a_latency_case():
    """Forty latency cases and one 400-step training run: the ETA is the training run's, not 41 means."""
    cases = [_case("latency", d=d) for d in range(40)] + [_case("stability", steps=400, depth=4)]
    estimate = Estimate(cases)
    assert prior_seconds(cases[-1]) == pytest.approx(10 * prior_seconds(_case("stability", steps=40)))
    share = prior_seconds(cases[-1]) / estimate.remaining(now=0.0)
    assert share > 0.6  # a mean per case would give it 1/41


def test_the_eta_learns_from_the_stored_runs_and_from_this_session():
    fast, slow = _case("latency", d=1), _case("latency", d=2)
    history = CaseHistory(by_case={fast.case_id: 0.5, slow.case_id: 20.0})
    estimate = Estimate([fast, slow], history)
    assert estimate.remaining(now=0.0) == pytest.approx(20.5)  # each case at its own stored time
    estimate.start(fast)
    estimate.finish(fast, 3.0)  # slower than stored: the rest is scaled up, smoothed by SMOOTHING_S
    scale = (3.0 + SMOOTHING_S) / (0.5 + SMOOTHING_S)
    assert estimate.remaining(now=0.0) == pytest.approx(20.0 * scale)
    assert 20.0 < estimate.remaining(now=0.0) < 20.0 * 6  # one case moves the estimate, never multiplies it


def test_a_round_set_is_expected_at_its_first_case():
    """Latency cases at the same parameters are timed together: the first takes the set's time, the
    others none; a member that finishes at once does not make the rest look fast."""
    same = [_case("latency", norm=n, impl="module", tokens=8, d=16) for n in ("layernorm", "rmsnorm", "dyt")]
    other = _case("latency", tokens=8, d=32)
    assert [len(s) for s in round_sets([same[0], other, *same[1:]])] == [3, 1]
    estimate = Estimate([*same, other])
    assert estimate.expected[same[0].case_id] == pytest.approx(3 * prior_seconds(same[0]))
    assert estimate.expected[same[1].case_id] == 0.0
    before = estimate.remaining(now=0.0)
    estimate.start(same[0])
    estimate.finish(same[0], 3 * prior_seconds(same[0]))  # the set at its expected time
    estimate.finish(same[1], 0.001)
    assert estimate.remaining(now=0.0) == pytest.approx(before - 3 * prior_seconds(same[0]), rel=0.01)


def test_the_eta_counts_down_while_a_long_case_runs():
    case = _case("stability", steps=400, depth=4)
    estimate = Estimate([case])
    estimate.start(case)
    started = estimate.current_started
    assert estimate.remaining(now=started + 5) == pytest.approx(prior_seconds(case) - 5)
    assert estimate.remaining(now=started + 10_000) == 0.0  # past its expectation: never negative


def test_history_reads_the_stored_case_times(tmp_path):
    """The stored runs' case_wall_s: per case (median over runs), per implementation and kind (mean)."""
    from _stores import create_store

    for run, seconds in (("r1", 1.0), ("r2", 3.0)):
        store = create_store(tmp_path, {"run_id": run, "started": run})
        for case, extra in ((_case("latency", d=1), 0.0), (_case("latency", d=2), 10.0)):
            rows = [{"metric": "case_wall_s", "unit": "s", "value": seconds + extra}]
            store.write_case(case, rows, "ok", None)
    history = case_history(tmp_path)
    assert history.by_case[_case("latency", d=1).case_id] == 2.0  # median of 1 and 3
    assert history.by_kind[("latency",)] == 7.0  # mean of 1, 11, 3, 13
    assert case_history(tmp_path, skip="r2").by_case[_case("latency", d=2).case_id] == 11.0


def test_the_label_is_one_line_cut_to_the_width(monkeypatch):
    """A case label longer than the terminal is cut with '…' on one line, never wrapped."""
    console = Console(file=io.StringIO(), width=60, force_terminal=True, record=True)
    monkeypatch.setattr(_progress, "err", console)
    progress = RunProgress([_case("latency", d=1)], quiet=False)
    task = progress.progress.add_task("run", total=1, case="latency layernorm:module " + "x=1 " * 40)
    console.print(progress.progress.make_tasks_table([progress.progress.tasks[task]]))
    lines = console.export_text().rstrip("\n").splitlines()
    assert len(lines) == 1 and len(lines[0]) <= 60 and "…" in lines[0], lines


def test_every_status_lines_up_in_the_log():
    ok = log_line(3, 117, "ok", 1.0, "latency a")
    unavailable = log_line(4, 117, "unavailable", 0.0, "latency b")
    assert ok.index("1.0s") == unavailable.index("0.0s") and ok.index("latency") == unavailable.index(
        "latency"
    )


def test_a_case_that_sweeps_nothing_is_named_by_its_own_parameters():
    deepnorm = _case("stability", placement="deepnorm", init="deepnorm", depth=4, steps=40)
    label = case_label(deepnorm)
    assert label.startswith("stability layernorm:module ") and "placement=deepnorm" in label
    swept = _case("latency", swept=("d",), d=16, tokens=8)
    assert case_label(swept) == "latency layernorm:module d=16"


def test_a_resumed_run_counts_the_whole_run(cli, write_suite, tmp_path):
    """Three cases stored, one part removed: the resumed session's log says 3/3, not 1/1."""
    results = tmp_path / "results"
    suite = write_suite(
        'name = "j"\n[[bench]]\nkind = "jacobian"\nnorms = ["layernorm:module"]\n'
        "[bench.sweep]\nd = [2, 4, 8]\n[bench.params]\ninputs = 1\n"
    )
    assert cli("run", suite, "--quiet", "--results", results).exit_code == 0
    (run,) = results.iterdir()
    sorted((run / "parts").glob("*.parquet"))[0].unlink()
    resumed = cli("run", "--resume", run.name, "--results", results)
    assert resumed.exit_code == 0, resumed.stderr
    assert re.search(r"^\[3/3\] ok ", resumed.stderr, re.M), resumed.stderr
    assert not re.search(r"^\[1/1\]", resumed.stderr, re.M)
    assert "1 ok in this session" in resumed.stderr


def test_a_session_stopped_at_once_still_counts_what_it_stored(write_suite, tiny_suite, tmp_path):
    """A second Ctrl-C ends the executor without its outcome: the closing line counts the parts this
    session stored, not 'nothing run'."""
    from normbench.executors.session import new_manifest, plan_run, run_session
    from normbench.results.store import RunStore

    results = tmp_path / "results"
    suite = write_suite(tiny_suite(norms='["identity"]', sweep="tokens = [8]\nd = [16, 32]"))
    plan = plan_run(str(suite), results, resume=None, shard=None, only=None, say=lambda _: None)

    store = RunStore.create(results, new_manifest(plan, "r", {}, "2026-01-01T00:00:00").to_dict())

    class StoresOneThenStops:
        name = "local"

        def run(self, store, todo, ctx, *, session, progress, say):
            store.write_case(todo[0], [{"metric": "x", "unit": "1", "value": 1.0}], "ok", None)
            raise KeyboardInterrupt

    class Quiet:
        def __init__(self, todo, finished):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    outcome, remaining = run_session(
        store, plan.cases, set(), "now", StoresOneThenStops(), Quiet, True, lambda _: None
    )
    assert outcome.interrupted and dict(outcome.statuses) == {"ok": 1} and remaining == 1
