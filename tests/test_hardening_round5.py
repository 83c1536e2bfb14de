"""Faults and hostile paths around stored runs: a results path that is not UTF-8 is refused before anything
is stored, a bad NORMBENCH_RAY_TIMEOUT_S is refused for a local Ray start too, a damaged part names a
command that sets it aside even when the run cannot resume, and an interval that does not exist (3 rounds)
is stored as null, not NaN."""

from __future__ import annotations

import math
import os
import subprocess

import pyarrow.compute as pc
import pytest
from _compare_support import store_run

from normbench.core.errors import NormbenchError
from normbench.results.store import RunStore


def test_a_results_path_that_is_not_utf8_is_refused_before_the_first_case(
    cli, tiny_suite, write_suite, tmp_path
):
    results = tmp_path / os.fsdecode(b"results-\xff")
    done = cli("run", write_suite(tiny_suite()), "--quiet", "--results", results)
    assert done.exit_code == 2 and "the path is not UTF-8" in done.stderr, done.stderr
    assert not results.exists()
    with pytest.raises(NormbenchError, match="not UTF-8"):
        RunStore.open(results, "latest")


def test_a_bad_ray_timeout_is_refused_for_a_local_start_too(monkeypatch):
    from normbench.executors.ray_cluster import bound_ray_waits

    monkeypatch.setenv("NORMBENCH_RAY_TIMEOUT_S", "abc")
    with pytest.raises(NormbenchError, match="NORMBENCH_RAY_TIMEOUT_S='abc'"):
        bound_ray_waits(None)


def test_a_damaged_part_names_a_command_that_sets_it_aside_without_resuming(tmp_path):
    store = store_run(tmp_path, "20260101-old")
    part = sorted(store.parts.glob("*.parquet"))[0]
    part.write_bytes(part.read_bytes()[:40])  # truncated
    with pytest.raises(NormbenchError) as info:
        store.read_table()
    message = str(info.value)
    assert "normbench run --resume 20260101-old" in message
    command = message.split("if the run cannot resume, `")[1].split("`")[0]
    subprocess.run(command, shell=True, check=True)  # the command as printed, set aside by hand
    assert (store.path / "rejected" / part.name).is_file()
    table = RunStore.open(tmp_path, "20260101-old").read_table()
    assert part.stem not in set(table.column("case_id").to_pylist())


def test_an_interval_of_three_rounds_is_stored_null_not_nan(tiny_run):
    results, run_id = tiny_run
    table = RunStore.open(results, run_id).read_table()
    bounds = table.filter(
        pc.is_in(table["metric"], value_set=pc.cast(["time_vs_ref_lo", "time_vs_ref_hi"], "string"))
    )
    values = bounds.column("value").to_pylist()
    assert values and all(v is None for v in values), values[:4]
    medians = table.filter(pc.equal(table["metric"], "time_vs_ref_median")).column("value").to_pylist()
    assert medians and all(v is not None and math.isfinite(v) for v in medians)
