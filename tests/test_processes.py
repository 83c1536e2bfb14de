"""CPU timing cases timed in k fresh processes: the rounds' split, the rows over processes, bad --processes, a
dying process, --resume, and compare testing with the process as the unit."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pandas as pd
import pytest
from conftest import make_child_env

from normbench.analysis.compare.values import process_test
from normbench.benches._processes import merge_processes, process_share
from normbench.core.errors import NormbenchError
from normbench.core.robust import over_processes
from normbench.executors.processes import check_processes

SUITE = """name = "spread"
threads = 1
[[bench]]
kind = "latency"
norms = [{norms}]
[bench.params]
tokens = 8
d = 16
samples = 6
warmup_calls = 0
min_sample_s = 1e-4
min_run_s = 0
"""


def _rows(process_ratio: float, faulted: float) -> list[dict]:
    rows = [{"metric": "time", "unit": "s", "value": 1e-3 * process_ratio, "sample": i} for i in range(3)]
    return rows + [
        {"metric": "time_median", "unit": "s", "value": 1e-3 * process_ratio},
        {"metric": "time_min", "unit": "s", "value": 0.9e-3 * process_ratio},
        {"metric": "time_vs_ref_median", "unit": "ratio", "value": process_ratio, "reference": "a:b"},
        {"metric": "time_vs_ref_lo", "unit": "ratio", "value": 0.5, "reference": "a:b"},
        {"metric": "time_vs_ref_hi", "unit": "ratio", "value": 2.0, "reference": "a:b"},
        {"metric": "faulted", "unit": "bool", "value": faulted},
        {"metric": "case_wall_s", "unit": "s", "value": 1.0},
    ]


def test_the_rounds_are_split_and_only_the_first_process_checks_accuracy():
    params = {"samples": 30, "min_run_s": 0.05, "accuracy_rows": 512, "memory": True}
    first, later = process_share(params, 0, 4), process_share(params, 3, 4)
    assert first["samples"] == later["samples"] == 7 and first["min_run_s"] == pytest.approx(0.0125)
    assert first["accuracy_rows"] == 512 and "lean" not in first
    assert later["accuracy_rows"] == 0 and later["memory"] is False and later["lean"]
    assert process_share(params, 0, 1) == params  # one process: today's case, untouched
    assert process_share({"samples": 4}, 1, 4)["samples"] == 3  # never under 3 rounds


def test_a_case_over_processes_is_the_median_with_the_interval_over_processes():
    ratios = [1.10, 1.20, 1.15, 1.40]
    results = [(i, _rows(r, float(i >= 2)), "ok", None) for i, r in enumerate(ratios)]
    rows, status, error = merge_processes(results)
    assert (status, error) == ("ok", None)
    frame = pd.DataFrame(rows)
    summary = frame[frame["process"].isna()].set_index("metric")["value"]
    expected = over_processes(ratios)
    assert summary["time_vs_ref_median"] == pytest.approx(expected.estimate)
    assert summary["time_vs_ref_lo"] == pytest.approx(expected.lo)
    assert summary["time_vs_ref_hi"] == pytest.approx(expected.hi)
    # a flag is the median over processes like any value: half of them faulted reads 0.5, a share
    assert summary["faulted"] == 0.5 and summary["case_wall_s"] == 4.0 and summary["processes"] == 4
    assert summary["time_min"] == pytest.approx(0.9e-3 * 1.10)
    per = frame[frame["metric"] == "time_vs_ref_process"].sort_values("process")
    assert list(per["value"]) == ratios and list(per["process"]) == [0, 1, 2, 3]
    raw = frame[frame["sample"].notna()]
    assert len(raw) == 12 and set(raw["process"]) == {0, 1, 2, 3}  # every process's raw samples kept
    assert (frame["metric"] == "time_vs_ref_lo").sum() == 1  # each process's own interval is not stored


def test_a_process_that_failed_fails_the_case_naming_it():
    results = [(0, _rows(1.0, 0.0), "ok", None), (1, [], "failed", "RuntimeError: boom")]
    rows, status, error = merge_processes(results)
    assert status == "failed" and error == "process 2 of 2: RuntimeError: boom"


@pytest.mark.parametrize("bad", ["0", "-2", "1.5", "two", "65", True])
def test_a_bad_process_count_is_refused(bad):
    with pytest.raises(NormbenchError, match="--processes"):
        check_processes(bad)


@pytest.mark.parametrize("bad", ["0", "-1", "2.5", "many", "1000"])
def test_the_command_refuses_a_bad_count_in_one_line(cli, write_suite, tmp_path, bad):
    suite = write_suite(SUITE.format(norms='"layernorm:module"'))
    result = cli("run", suite, "--results", tmp_path / "r", "--processes", bad)
    assert result.exit_code == 2
    first = result.stderr.strip().splitlines()[0]
    assert first.startswith("error: --processes") and "Traceback" not in result.stderr
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_the_suite_key_is_checked_with_its_path(cli, write_suite, tmp_path):
    suite = write_suite(
        "processes = 0\n"
        + SUITE.format(norms='"layernorm:module"').split("\n", 1)[1].replace("threads = 1\n", 'name = "x"\n')
    )
    result = cli("run", suite, "--results", tmp_path / "r", "--dry-run")
    assert result.exit_code == 2 and "processes" in result.stderr


def _run(tmp_path, *args, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "normbench", "run", *map(str, args), "--results", str(tmp_path / "r")],
        env=make_child_env(NORMBENCH_PROCESSES="1", **env),
        capture_output=True,
        text=True,
        check=False,
    )


def _load(tmp_path) -> pd.DataFrame:
    import normbench

    return normbench.load("latest", results=tmp_path / "r")


def test_a_run_in_three_processes_stores_each_process_beside_the_case(write_suite, tmp_path):
    suite = write_suite(SUITE.format(norms='"layernorm:module", "rmsnorm:module"'))
    done = _run(tmp_path, suite, "--processes", "3")
    assert done.returncode == 0, done.stderr
    frame = _load(tmp_path)
    rms = frame[frame["norm"] == "rmsnorm"]
    per = rms[rms["metric"] == "time_vs_ref_process"]
    assert sorted(per["process"]) == [0, 1, 2]
    summary = rms[rms["process"].isna()].set_index("metric")["value"]
    expected = over_processes(list(per["value"]))
    assert summary["time_vs_ref_median"] == pytest.approx(expected.estimate)
    assert summary["time_vs_ref_lo"] == pytest.approx(expected.lo)
    assert summary["processes"] == 3
    raw = rms[(rms["metric"] == "time") & rms["sample"].notna()]
    assert raw.groupby("process").size().to_dict() == {0: 3, 1: 3, 2: 3}  # 6 rounds split over 3
    manifest = json.loads(next((tmp_path / "r").glob("*/manifest.json")).read_text())
    assert manifest["sessions"][0]["processes"] == 3
    report = subprocess.run(
        [sys.executable, "-m", "normbench", "report", "latest", "--results", str(tmp_path / "r")],
        env=make_child_env(COLUMNS="120"),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "vs layernorm:module (paired)" in report and "95% interval over 3 processes" in report


def test_a_case_that_kills_its_process_fails_unstored_and_resume_times_it(write_suite, tmp_path):
    die = tmp_path / "die"
    die.mkdir()
    suite = write_suite(SUITE.format(norms='"layernorm:module", "dies_unless_spared:module"'))
    env = {"NORMBENCH_PLUGINS": "ray_dying_norms", "NB_DIE_DIR": str(die)}
    done = _run(tmp_path, suite, "--processes", "2", **env)
    assert done.returncode == 1
    assert "dies_unless_spared" in done.stderr and "killed" not in done.stdout
    assert "exited 17" in done.stderr  # the reason a process ended
    frame = _load(tmp_path)
    assert set(frame["norm"]) == {"layernorm"}  # the run went on; the dead case is not stored
    run_id = frame["run_id"].iloc[0]
    (die / "spare").write_text("")
    done = _run(tmp_path, "--resume", run_id, **env)
    assert done.returncode == 0, done.stderr
    frame = _load(tmp_path)
    dying = frame[frame["norm"] == "dies_unless_spared"]
    assert set(dying["status"]) == {"ok"} and dying["case_id"].nunique() == 1
    assert len(dying[dying["metric"] == "processes"]) == 1  # stored once
    assert len(frame[(frame["norm"] == "layernorm") & (frame["metric"] == "processes")]) == 1


def test_compare_tests_per_process_values_with_the_process_as_the_unit():
    same = [1.00, 1.02, 0.99, 1.01]
    p, how = process_test(same, [v * 1.005 for v in same])
    assert p > 0.05 and "4 vs 4 processes" in how
    p, _ = process_test(same, [v * 1.3 for v in same])
    assert p < 0.002  # a 1.3x change over 4 processes a side is significant at compare's alpha
    one_off = [1.00, 1.01, 1.00, 1.50]  # one process drew a slow state: weaker evidence, not a change
    p, _ = process_test(same, one_off)
    assert p > 0.002
    assert process_test([1.0], [1.3])[0] is None
    assert math.isclose(process_test(same, same)[0], 1.0)
