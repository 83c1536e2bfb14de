"""The self-check's logic on tiny ops: both timers give positive medians in one process, the summary's
agreement, order ratio and CV are the closed forms of the per-process medians, the verdict names what is
off, the plain peer runs beside the same-state one, and a bad --op is a one-line error (exit 2). Its
timings are a benchmark (`make selfcheck`), not a test."""

from __future__ import annotations

import statistics

import pytest

from normbench import selfcheck as sc


def test_measure_ops_times_both_timers_on_a_tiny_op():
    ops = [sc.Op("layernorm", "module", 8, 16), sc.Op("identity", "copy", 8, 16)]
    out = sc.measure_ops(ops, pairs=1, samples=3, min_run_time=0.01)
    assert list(out) == ["layernorm:module 8x16", "identity:copy 8x16"]
    for r in out.values():
        assert r["normbench"] > 0 and r["torch"] > 0 and r["faults_per_call"] >= 0


def _proc(order, nb, tu, faults=0.0, share=0.0):
    result = {"normbench": nb, "torch": tu, "faults_per_call": faults, "fault_share": share}
    return {"order": order, "results": {"op": result}}


def test_summary_is_the_closed_form_of_the_process_medians():
    procs = [
        _proc("forward", 1.0, 1.0),
        _proc("reversed", 1.2, 1.0),
        _proc("forward", 1.1, 1.0),
        _proc("reversed", 1.3, 1.0),
    ]
    (row,) = sc.summarize(procs)
    assert row["agreement"] == pytest.approx(statistics.median([1.0, 1.2, 1.1, 1.3]))
    assert row["worst_agreement"] == pytest.approx(1.3)
    assert row["order_ratio"] == pytest.approx(1.05 / 1.25)
    assert row["cv_normbench"] == pytest.approx(statistics.stdev([1.0, 1.2, 1.1, 1.3]) / 1.15)
    assert row["cv_torch"] == 0.0
    assert sc.verdict(row) == "disagrees, order-dependent, spread"


def test_verdict_ok_when_within_five_percent_everywhere():
    procs = [_proc("forward", 1.00, 1.01), _proc("reversed", 1.02, 1.00), _proc("forward", 1.01, 0.99)]
    (row,) = sc.summarize(procs)
    assert sc.verdict(row) == "ok"
    (row,) = sc.summarize([_proc("forward", 1.0, 1.0, 2048.0, 0.5), _proc("reversed", 1.0, 1.0)])
    assert sc.verdict(row) == "faults"
    (row,) = sc.summarize([_proc("forward", 1.0, 1.0, 136.0, 0.05), _proc("reversed", 1.0, 1.0)])
    assert sc.verdict(row) == "ok"  # one stray fault event in 20 samples is recorded, not flagged


def test_cv_of_constant_and_single_values():
    assert sc.cv([2.0, 2.0, 2.0]) == 0.0 and sc.cv([3.0]) == 0.0
    assert sc.cv([1.0, 3.0]) == pytest.approx(2**0.5 / 2)


@pytest.mark.parametrize("text", ["layernorm", "layernorm:module:4096", "layernorm:module:ax2"])
def test_parse_op_rejects_malformed(text):
    with pytest.raises(ValueError, match="expected norm:impl:TOKENSxD"):
        sc.parse_op(text)
    assert sc.parse_op("rmsnorm:module:4096x1024") == sc.Op("rmsnorm", "module", 4096, 1024)


def test_cli_unknown_op_is_a_one_line_error(cli):
    result = cli("selfcheck", "--op", "nosuchnorm:module:8x8")
    assert result.exit_code == 2
    assert "nosuchnorm:module: no such norm implementation" in result.stderr


def test_plain_peer_column_is_the_closed_form_of_its_processes():
    procs = [_proc("forward", 1.0, 1.0), _proc("reversed", 1.0, 2.0)]
    plain = [{"order": "forward", "results": {"op": {"torch": 3.0}}}]
    plain.append({"order": "reversed", "results": {"op": {"torch": 6.0}}})
    (row,) = sc.summarize(procs, plain)
    assert row["torch_plain_s"] == pytest.approx(4.5)
    assert row["state_cost"] == pytest.approx(4.5 / 1.5)
    assert row["cv_torch_plain"] == pytest.approx(statistics.stdev([3.0, 6.0]) / 4.5)
    out = sc.measure_plain([sc.Op("layernorm", "module", 8, 16)], pairs=1, min_run_time=0.01, threads=1)
    assert out["layernorm:module 8x16"]["torch"] > 0


def test_cli_prints_the_same_state_and_the_plain_peer(cli):
    result = cli(
        "selfcheck", "--op", "layernorm:module:8x16", "--runs", "1", "--pairs", "1", "--min-run-time", "0.01"
    )
    assert result.exit_code in (0, 1), result.stderr  # 1: an op is off (tiny ops time noisily)
    words = " ".join(result.stdout.split())  # headers may stack on two lines, tables continue
    assert all(w in words.split() for w in ("torch", "(same", "state)", "(plain)", "plain/same"))
    assert "pages=" in result.stdout
    lines = result.stdout.splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith("advice: ")]
    assert all(line.startswith("  ") for line in lines[at + 1 :])  # the last thing said, wrapped
    assert max(map(len, lines)) <= 120
