"""Expansion is deterministic: a case's id depends only on what defines it, and --only/--shard select exact subsets."""

from __future__ import annotations

import itertools
import re

import pytest

from normbench.norms import get_norm
from normbench.suite.expand import expand, select
from normbench.suite.load import parse_suite

SUITE = """name = "ids"
[[bench]]
kind = "latency"
norms = ["layernorm", "rmsnorm:composite"]
[bench.sweep]
tokens = [8, 64]
d = [16, 32, 48]
mode = ["fwd", "fwd+bwd"]
[bench.params]
samples = 3
"""

# The same cases written differently: another suite name, keys in another order (dotted keys, so kind and
# norms can come last), the one-value `samples` swept instead of fixed, and defaults spelled out.
SAME_CASES = """name = "another-file"
[[bench]]
params.eps = 0.00001
params.dtype = "fp32"
sweep.samples = [3]
sweep.mode = ["fwd", "fwd+bwd"]
sweep.d = [16, 32, 48]
sweep.tokens = [8, 64]
norms = ["layernorm", "rmsnorm:composite"]
kind = "latency"
"""


def cases_of(text: str):
    return expand(parse_suite(text, "suite.toml"))


def test_expansion_is_norm_impls_times_the_cartesian_product():
    cases = cases_of(SUITE)
    pairs = [("layernorm", i) for i, info in get_norm("layernorm").impls.items() if info.default] + [
        ("rmsnorm", "composite")
    ]
    assert len(cases) == len(pairs) * 2 * 3 * 2
    assert [(c.norm, c.impl) for c in cases[::12]] == pairs
    grid = [(c.norm, c.impl, c.params["tokens"], c.params["d"], c.params["mode"]) for c in cases]
    assert grid == [
        (n, i, *rest)
        for n, i in pairs
        for rest in itertools.product([8, 64], [16, 32, 48], ["fwd", "fwd+bwd"])
    ]
    assert all(c.params["samples"] == 3 and c.params["dtype"] == "fp32" for c in cases)


def test_case_ids_are_well_formed_and_unique():
    cases = cases_of(SUITE)
    assert all(re.fullmatch(r"[0-9a-f]{12}", c.case_id) for c in cases)
    assert len({c.case_id for c in cases}) == len(cases)


def test_same_case_has_same_id_whatever_the_key_order_or_suite_file():
    ids = {c.case_id: c.params for c in cases_of(SUITE)}
    assert {c.case_id: c.params for c in cases_of(SAME_CASES)} == ids


def test_an_integer_where_a_number_is_expected_gives_the_same_id():
    as_float = {c.case_id for c in cases_of(SUITE + "min_sample_s = 1.0\n")}
    assert {c.case_id for c in cases_of(SUITE + "min_sample_s = 1\n")} == as_float


@pytest.mark.parametrize(
    "changed", ["samples = 4", "seed = 1", 'dtype = "bf16"', "eps = 1e-6", "copy_probe = false"]
)
def test_any_changed_parameter_changes_every_id(changed):
    base = {c.case_id for c in cases_of(SUITE)}
    text = SUITE.replace("samples = 3", changed) if changed.startswith("samples") else SUITE + changed + "\n"
    ids = {c.case_id for c in cases_of(text)}
    assert len(ids) == len(base) and not base & ids


def test_ids_do_not_depend_on_the_process(normbench_proc, tmp_path):
    """Same ids in a fresh interpreter with another hash seed: what --resume and compare rely on."""
    (tmp_path / "ids.toml").write_text(SUITE)
    proc = normbench_proc("run", "ids.toml", "--dry-run", extra_env={"PYTHONHASHSEED": "12345"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    cases = cases_of(SUITE)
    assert lines[-1] == f"{len(cases)} cases"
    assert lines[:-1] == [f"{c.case_id}  {c.label}" for c in cases]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 24, 30])
def test_shards_partition_the_case_list_exactly(n):
    cases = cases_of(SUITE)
    shards = [select(cases, shard=(i, n)) for i in range(1, n + 1)]
    ids = [c.case_id for shard in shards for c in shard]
    assert sorted(ids) == sorted(c.case_id for c in cases)  # every case in exactly one shard
    assert max(map(len, shards)) - min(map(len, shards)) <= 1  # balanced
    for shard in shards:  # each shard keeps the suite's order
        assert [c.case_id for c in shard] == [c.case_id for c in cases if c in shard]


def test_only_selects_by_substring_and_glob_anywhere_in_the_label():
    cases = cases_of(SUITE)
    composite = [c for c in cases if c.impl == "composite"]
    assert select(cases, ["rmsnorm:composite"]) == [c for c in composite if c.norm == "rmsnorm"]
    assert select(cases, ["*:composite"]) == composite
    assert select(cases, ["layernorm:*"]) == [c for c in cases if c.norm == "layernorm"]
    assert select(cases, ["d=48"]) == [c for c in cases if c.params["d"] == 48]
    assert select(cases, ["mode=fwd+bwd", "tokens=64 "]) == [
        c for c in cases if c.params["mode"] == "fwd+bwd" or c.params["tokens"] == 64
    ]
    assert select(cases, ["no-such-case"]) == []


def test_only_and_shard_compose_into_a_partition_of_the_selection():
    cases = cases_of(SUITE)
    chosen = select(cases, ["d=32"])
    parts = [select(cases, ["d=32"], (i, 4)) for i in range(1, 5)]
    assert sorted(c.case_id for p in parts for c in p) == sorted(c.case_id for c in chosen)
