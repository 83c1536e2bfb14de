"""`normbench compare` as a CI gate fails closed: deterministic rows compare by value across a hostname
change and a busy machine (exit 0), a Jacobian value beyond its tolerance is a regression (exit 1), a case
not comparable is inconclusive (exit 3, 0 with --allow-incomparable), a planted 3x slowdown is a regression
(exit 1), noise too high for --factor is inconclusive, and two runs with nothing in common are bad input."""

from __future__ import annotations

import json

from _compare_support import ENV, LATENCY_IMPLS, store_run
from _stores import create_store
from typer.testing import CliRunner

from normbench.cli import app

BUSY = {**ENV, "hostname": "runner-b"}  # another CI job: a fresh hostname


def _compare(root, *args, base="base", new="new"):
    return CliRunner().invoke(app, ["compare", base, new, "--results", str(root), *args])


def _json(result) -> dict:
    return json.loads(result.stdout)


def test_identical_deterministic_rows_compare_across_hostname_and_load(tmp_path):
    store_run(tmp_path, "base")
    store_run(tmp_path, "new", env=BUSY, load=7.5)  # 7.5 > 2 cores: a timing row would be x
    result = _compare(tmp_path, "--format", "json")
    assert result.exit_code == 0, result.output
    data = _json(result)
    assert data["counts"] == {"+": 0, "-": 0, "~": 0, "=": 4, "x": 0, "!": 0}  # 3 Jacobian + 1 pooled loss
    assert data["exit_code"] == 0 and data["verdict"].startswith("PASS")
    assert data["regressions"] == [] and data["not_compared"] == []


def test_a_last_bit_difference_on_another_instruction_set_is_equal(tmp_path):
    """An Intel runner with AMX puts a training loss one fp32 ulp away: within the tolerance, `=`."""
    from normbench.analysis.compare.frames import compare_frames
    from normbench.analysis.compare.options import CompareOptions

    intel = {**ENV, "cpu": "Intel Xeon", "cpu_flags": ["amx_tile", "avx2", "avx512f"]}
    base = store_run(tmp_path, "base").read()
    new = store_run(tmp_path, "new", env=intel).read()
    new["value"] = new["value"].where(new["metric"] != "final_loss", new["value"] * (1 + 2**-23))
    result = compare_frames(base, new, ENV, intel, CompareOptions())
    (loss,) = [r for r in result.rows if r.metric == "final_loss"]
    assert (loss.mark, loss.note) == ("=", "within 8 fp32 ulps x 40 steps, relative")
    far = new.assign(value=new["value"].where(new["metric"] != "final_loss", new["value"] * 1.01))
    (moved,) = [
        r for r in compare_frames(base, far, ENV, intel, CompareOptions()).rows if r.metric == "final_loss"
    ]
    assert moved.mark == "x" and "cpu_flags: +amx_tile" in moved.note


def test_one_jacobian_value_beyond_tolerance_is_a_regression(tmp_path):
    store_run(tmp_path, "base")
    store_run(tmp_path, "new", env=BUSY, rel_err={("layernorm", 3.0): [4.4e-16, 3.1e-9]})
    result = _compare(tmp_path, "--format", "json")
    assert result.exit_code == 1, result.output
    data = _json(result)
    assert data["counts"]["+"] == 1 and data["counts"]["="] == 3
    (regression,) = data["regressions"]
    assert regression["metric"] == "rel_err" and "mean=3.0" in regression["case"]
    assert "beyond 64 fp64 ulps, absolute" in regression["reason"]


def test_a_deterministic_change_with_another_torch_is_not_comparable(tmp_path):
    store_run(tmp_path, "base")
    store_run(
        tmp_path, "new", env={**ENV, "torch": "2.14.0"}, rel_err={("layernorm", 3.0): [4.4e-16, 3.1e-9]}
    )
    result = _compare(tmp_path, "--format", "json")
    assert result.exit_code == 3, result.output
    (x,) = _json(result)["not_compared"]
    assert "torch: 2.13.0 -> 2.14.0" in x["reason"] and "platform change" in x["reason"]
    # the cases still within the tolerance compare: a torch upgrade alone does not blind the gate
    assert _json(result)["counts"]["="] == 3


def test_a_case_not_comparable_is_inconclusive_unless_allowed(tmp_path):
    store_run(tmp_path, "base")
    store_run(tmp_path, "new", extra_jacobian=True)  # a case the base never ran
    result = _compare(tmp_path, "--format", "plain")
    assert result.exit_code == 3, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith("INCONCLUSIVE: 1 not comparable (exit 3)")
    assert '"x": 1' in first
    assert "only in new" in result.stdout
    allowed = _compare(tmp_path, "--format", "plain", "--allow-incomparable")
    assert allowed.exit_code == 0 and allowed.stdout.startswith(
        "PASS: no regression (1 not comparable, allowed)"
    )
    kept = _compare(tmp_path, "--format", "plain", "--fail-on-regression")  # the old flag still parses
    assert kept.exit_code == 3


def test_a_planted_3x_latency_slowdown_is_a_regression(tmp_path):
    medians = {impl: 1e-5 * (1 + k / 10) for k, impl in enumerate(LATENCY_IMPLS)}
    store_run(tmp_path, "base", latency=medians)
    store_run(tmp_path, "new", env=BUSY, latency={**medians, "i4": medians["i4"] * 3}, jitter=0.01)
    result = _compare(tmp_path, "--format", "json", "--factor", "1.5")
    assert result.exit_code == 1, result.output
    data = _json(result)
    assert [r["case"].split()[0] for r in data["regressions"]] == ["layernorm:i4"]
    assert data["regressions"][0]["ratio"] > 2.9


def test_paired_ratios_compare_on_a_busy_machine_and_absolute_times_do_not(tmp_path):
    """A paired ratio cancels the machine's speed: load above the core count, another hostname and core
    count do not make it incomparable. Absolute seconds (--absolute) are x there."""
    medians = {impl: 1e-5 for impl in LATENCY_IMPLS[:2]}
    store_run(tmp_path, "base", latency=medians)
    store_run(tmp_path, "new", latency=medians, load=5.0, env={**BUSY, "cpu_count": 4})
    data = _json(_compare(tmp_path, "--format", "json"))
    assert data["exit_code"] == 0 and data["counts"]["x"] == 0, data["not_compared"]
    absolute = _json(_compare(tmp_path, "--format", "json", "--absolute"))
    reasons = {x["reason"] for x in absolute["not_compared"]}
    assert reasons == {"environment differs: cpu_count: 2 -> 4"}
    store_run(tmp_path, "new2", latency=medians, load=5.0)
    absolute = _json(_compare(tmp_path, "--format", "json", "--absolute", new="new2"))
    reasons = {x["reason"] for x in absolute["not_compared"]}
    assert reasons == {"new ran with load 5.0 above 2 cores (--allow-load to compare)"}
    assert absolute["exit_code"] == 3 and absolute["counts"]["x"] == 2


def test_paired_ratios_need_the_same_cpu_model(tmp_path):
    medians = {impl: 1e-5 for impl in LATENCY_IMPLS[:2]}
    store_run(tmp_path, "base", latency=medians)
    store_run(tmp_path, "new", latency=medians, env={**ENV, "cpu": "Intel Xeon"})
    data = _json(_compare(tmp_path, "--format", "json"))
    assert data["exit_code"] == 3 and data["counts"]["x"] == 2
    assert all("cpu: AMD EPYC 7763 -> Intel Xeon" in x["reason"] for x in data["not_compared"])


def test_runs_with_other_plugin_overrides_do_not_compare_times(tmp_path):
    """A plugin that replaced a built-in (run --allow-override) measured other code under the same name."""
    medians = {impl: 1e-5 for impl in LATENCY_IMPLS[:2]}
    store_run(tmp_path, "base", latency=medians)
    store_run(tmp_path, "new", latency=medians, overrides=["norm 'layernorm': normbench's replaced by fake"])
    data = _json(_compare(tmp_path, "--format", "json"))
    assert data["exit_code"] == 3 and data["counts"]["x"] == 2, data["not_compared"]
    assert all("overrides" in x["reason"] for x in data["not_compared"])


def test_noise_above_the_factor_is_inconclusive(tmp_path):
    """Every case moved ±15% by the run's own state: a 1.1x change cannot be told from that."""
    medians = {impl: 1e-5 * (1 + k / 10) for k, impl in enumerate(LATENCY_IMPLS)}
    store_run(tmp_path, "base", latency=medians)
    store_run(tmp_path, "new", latency=medians, jitter=0.15)
    result = _compare(tmp_path, "--format", "json")
    data = _json(result)
    assert result.exit_code == 3 and data["counts"]["+"] == 0, result.output
    assert data["undetectable"] and "noise floor" in data["undetectable"][0]
    assert _compare(tmp_path, "--format", "json", "--factor", "2").exit_code == 0


def test_runs_without_cpu_flags_fall_back_to_the_cpu_model(tmp_path):
    old = {k: v for k, v in ENV.items() if k != "cpu_flags"}  # a run stored before the manifest had them
    store_run(tmp_path, "base", env=old)
    store_run(
        tmp_path, "new", env={**ENV, "cpu": "Intel Xeon"}, rel_err={("layernorm", 3.0): [4.4e-16, 3.1e-9]}
    )
    (x,) = _json(_compare(tmp_path, "--format", "json"))["not_compared"]
    assert "cpu (instruction set): AMD EPYC 7763 -> Intel Xeon" in x["reason"]


def test_two_runs_with_nothing_in_common_are_bad_input(tmp_path):
    store_run(tmp_path, "base")
    from normbench.core.case import Case, case_id

    other = create_store(tmp_path, {"run_id": "new", "started": "new", "env": ENV, "suite": "other"})
    params = {"block": "linear", "tokens": 8, "d": 8}
    other.write_case(
        Case("block", None, None, params, 0, case_id("block", None, None, params)), [], "ok", None
    )
    result = _compare(tmp_path)
    assert result.exit_code == 2
    (line,) = [s for s in result.stderr.splitlines() if s.startswith("error:")]
    assert "no case in common" in line and "'gate'" in line and "'other'" in line


def test_every_bench_kind_has_compare_metrics_of_a_declared_kind():
    """block and init are compared too; timing metrics have no tolerance, deterministic ones have one."""
    from normbench.benches import all_benches

    benches = all_benches()
    timing = {"latency": ["time_vs_ref", "time_vs_copy"], "block": ["time_vs_ref", "time_vs_copy"]}
    deterministic = {
        "jacobian": ["rel_err"],
        "stability": ["final_loss"],
        "init": ["output_change", "ffn_grad_norm_of_mean"],
    }
    params = {"dtype": "fp32", "steps": 40, "method": "exact"}
    for kind, metrics in {**timing, **deterministic}.items():
        assert list(benches[kind].compare_metrics) == metrics
        tolerances = [benches[kind].compare_tolerance(m, params) for m in metrics]
        assert all((t is None) == (kind in timing) for t in tolerances), kind
        if kind in timing:  # the paired ratios by default; seconds only under --absolute
            assert set(benches[kind].paired_metrics) == set(metrics)
            assert list(benches[kind].absolute_metrics) == ["time"]


def test_a_deterministic_change_is_judged_by_the_factor_not_a_test_on_paired_values(tmp_path):
    """Four seeded inputs per case: a Mann-Whitney test on 4 vs 4 values can never reach p < 0.002, but
    these are the same inputs value for value, with no sampling noise; beyond tolerance and factor, it is +."""
    four = [2e-16, 1e-16, 3e-16, 2e-16]
    store_run(tmp_path, "base", rel_err={("layernorm", 0.0): four})
    store_run(tmp_path, "new", rel_err={("layernorm", 0.0): [v + 1e-6 for v in four]})
    data = _json(_compare(tmp_path, "--format", "json"))
    (regression,) = data["regressions"]
    assert "mean=0.0" in regression["case"] and "deterministic: factor only" in regression["reason"]


def test_a_run_compared_with_itself_is_bad_input(tmp_path):
    """A recipe that compares a run with itself would pass whatever changed: refused, exit 2, one line."""
    store_run(tmp_path, "base", latency={"i0": 1e-5})
    for args, why in (
        (["base", "base"], "is on both sides"),
        (["base", "latest"], "is on both sides"),
        (["base,base", "base"], "is listed twice"),  # a side's list is checked first
    ):
        result = CliRunner().invoke(app, ["compare", *args, "--results", str(tmp_path)])
        assert result.exit_code == 2, result.output
        assert why in result.stderr and "Traceback" not in result.output
