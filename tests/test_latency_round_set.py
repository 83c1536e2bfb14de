"""A latency round set: every implementation at one shape is timed in the same rounds with the reference
and the copy probe; the stored ratios are exactly the per-round ratios of the stored raw times; a failing
member fails only its own case; the reference is timed even when the run does not store it; pairing =
"case" and a time limit keep a case to itself; finished peers are stored even after a stop."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from latency_helpers import FAST

from normbench.benches import RunContext
from normbench.executors.local import run_cases
from normbench.runner import run_one
from normbench.suite.expand import expand
from normbench.suite.load import parse_suite

SHAPE = {"tokens": 32, "d": 64, "accuracy_rows": 0, "memory": False, **FAST, "samples": 8}


def toml(value) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else json.dumps(value)


def cases_of(norms: list[str], **params) -> list:
    body = "\n".join(f"{k} = {toml(v)}" for k, v in {**SHAPE, **params}.items())
    text = f'name = "t"\n[[bench]]\nkind = "latency"\nnorms = {toml(norms)}\n[bench.params]\n{body}\n'
    return expand(parse_suite(text))


def run_all(cases, ctx=None):
    """Run the cases as the local executor does (upcoming set, ready cases first); {label: frame}."""
    ctx = ctx or RunContext(threads=1)
    out = {}
    queue = list(cases)
    while queue:
        queue.sort(key=lambda c: c.case_id not in ctx.ready)
        case = queue.pop(0)
        ctx.upcoming = queue
        rows, status, error = run_one(case, ctx)
        out[f"{case.norm}:{case.impl}"] = (pd.DataFrame(rows), status, error)
    return out


def value(frame, metric):
    return float(frame.loc[frame["metric"] == metric, "value"].iloc[0])


def raw(frame, metric):
    rows = frame[(frame["metric"] == metric) & frame["sample"].notna()].sort_values("sample")
    return list(rows["value"])


def test_one_round_set_times_every_implementation_of_a_shape():
    results = run_all(cases_of(["layernorm:module", "layernorm:functional", "rmsnorm:module", "identity"]))
    assert {s for _, s, _ in results.values()} == {"ok"}
    owners = {frame["round_set"].dropna().unique()[0] for frame, _, _ in results.values()}
    assert len(owners) == 1  # one set of rounds for the whole shape
    ref = results["layernorm:module"][0]
    copy = results["identity:copy"][0]
    for label, (frame, _, _) in results.items():
        assert value(frame, "round_members") == 4
        if label != "layernorm:module":  # the reference has no ratio to itself ...
            ratios = raw(frame, "time_vs_ref")
            assert ratios == pytest.approx(
                [a / b for a, b in zip(raw(frame, "time"), raw(ref, "time"), strict=True)], rel=1e-12
            )
            assert set(frame.loc[frame["metric"] == "time_vs_ref", "reference"]) == {"layernorm:module"}
            lo, mid, hi = (value(frame, f"time_vs_ref_{s}") for s in ("lo", "median", "hi"))
            assert lo <= mid <= hi
        else:
            assert "time_vs_ref" not in set(frame["metric"])
        if label != "identity:copy":  # ... the copy probe none to itself
            expected = [a / b for a, b in zip(raw(frame, "time"), raw(copy, "time"), strict=True)]
            assert raw(frame, "time_vs_copy") == pytest.approx(expected, rel=1e-12)
        else:
            assert "time_vs_copy" not in set(frame["metric"])
        assert len(raw(frame, "time")) == SHAPE["samples"]  # one sample per round


def test_reference_is_timed_even_when_the_run_does_not_store_it():
    results = run_all(cases_of(["rmsnorm:module", "rmsnorm:functional"], copy_probe=False))
    for frame, status, _ in results.values():
        assert status == "ok"
        assert value(frame, "round_members") == 3  # two cases and the reference
        assert len(raw(frame, "time_vs_ref")) == SHAPE["samples"]
        assert "time_vs_copy" not in set(frame["metric"])


def test_a_suite_level_reference_reaches_every_latency_case():
    text = (
        'name = "t"\nreference = "rmsnorm:module"\n[[bench]]\nkind = "latency"\nnorms = ["layernorm:module"]\n'
        "[bench.params]\ntokens = 8\nd = 8\n"
    )
    (case,) = expand(parse_suite(text))
    assert case.params["reference"] == "rmsnorm:module"


def test_pairing_case_and_time_limits_keep_a_case_to_itself():
    for cases in (
        cases_of(["layernorm:module", "rmsnorm:module"], pairing="case"),
        [
            c.__class__(**{**c.__dict__, "timeout_s": 60.0})
            for c in cases_of(["layernorm:module", "rmsnorm:module"])
        ],
    ):
        results = run_all(cases)
        sets = {frame["round_set"].dropna().unique()[0] for frame, _, _ in results.values()}
        assert len(sets) == 2
        assert value(results["rmsnorm:module"][0], "round_members") == 3  # itself, the reference, the probe


def test_a_failing_member_fails_only_its_own_case(monkeypatch):
    from normbench.norms import get_norm

    rms = get_norm("rmsnorm")
    original = rms.build

    def build(impl, *args, **kwargs):
        if impl == "functional":
            raise RuntimeError("planted failure")
        return original(impl, *args, **kwargs)

    monkeypatch.setattr(rms, "build", build)
    results = run_all(cases_of(["layernorm:module", "rmsnorm:functional", "rmsnorm:module"]))
    assert results["rmsnorm:functional"][1:] == ("failed", "RuntimeError: planted failure")
    assert results["rmsnorm:module"][1] == "ok" and results["layernorm:module"][1] == "ok"


def test_an_unavailable_reference_leaves_the_cases_without_a_ratio():
    results = run_all(cases_of(["rmsnorm:module"], reference="layernorm:liger"))
    frame, status, _ = results["rmsnorm:module"]
    assert status == "ok" and "time_vs_ref" not in set(frame["metric"])
    assert "time_vs_copy" in set(frame["metric"])


def test_finished_peers_are_stored_after_a_stop(monkeypatch):
    """A stop asked for while the first case times the whole shape: that case and the peers it measured
    are stored, nothing else is started."""
    import signal

    import normbench.executors.local as local

    stored = []
    monkeypatch.setattr(
        local, "store_finished", lambda store, case, rows, status, error, **kw: stored.append(case)
    )
    cases = cases_of(["layernorm:module", "rmsnorm:module"]) + cases_of(["layernorm:module"], d=32)
    real_run_one = local.run_one

    def run_and_interrupt(case, ctx):
        result = real_run_one(case, ctx)
        if len(stored) == 0:
            signal.raise_signal(signal.SIGINT)  # the first Ctrl-C: stop after the current case
        return result

    monkeypatch.setattr(local, "run_one", run_and_interrupt)
    outcome = run_cases(None, cases, RunContext(threads=1), session=1, say=lambda s: None)
    assert outcome.interrupted
    assert [c.case_id for c in stored] == [
        c.case_id for c in cases[:2]
    ]  # the shape's two cases, not the third
