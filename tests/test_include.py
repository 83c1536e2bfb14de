"""`include = [...]` in a suite: included benches and claims run first, an included file's problems name
that file, repeats are refused, and a resumed run re-reads the included text stored in its manifest."""

from __future__ import annotations

import pytest

from normbench.core.errors import SuiteError
from normbench.suite.expand import expand
from normbench.suite.load import load_suite, parse_suite

BASE = """
name = "base"
description = "included"
claims = ["rmsnorm_exact_bound"]
[[bench]]
kind = "latency"
norms = ["identity"]
[bench.params]
tokens = 8
d = 16
"""


def _write(tmp_path, base=BASE, top_bench='norms = ["layernorm:module"]\n[bench.params]\ntokens = 8\nd = 32'):
    (tmp_path / "base.toml").write_text(base)
    top = tmp_path / "top.toml"
    top.write_text(f'name = "top"\ninclude = ["base.toml"]\n[[bench]]\nkind = "latency"\n{top_bench}\n')
    return top


def test_included_benches_and_claims_come_first(tmp_path):
    suite = load_suite(_write(tmp_path))
    cases = expand(suite)
    assert [c.norm for c in cases] == ["identity", "layernorm"]
    assert suite.claims == ["rmsnorm_exact_bound"]
    assert list(suite.includes) == [str(tmp_path / "base.toml")]


def test_problem_in_included_file_names_that_file(tmp_path):
    top = _write(tmp_path, base=BASE.replace("d = 16", "d = 0"))
    with pytest.raises(SuiteError) as err:
        load_suite(top)
    assert str(err.value) == f"{tmp_path / 'base.toml'}: bench[0].params.d: 0 must be >= 1"


def test_repeating_an_included_case_is_refused(tmp_path):
    top = _write(tmp_path, top_bench='norms = ["identity"]\n[bench.params]\ntokens = 8\nd = 16')
    with pytest.raises(SuiteError, match="repeats cases of an included suite"):
        load_suite(top)


def test_missing_include_is_a_suite_error(tmp_path):
    top = tmp_path / "top.toml"
    top.write_text('name = "top"\ninclude = ["nowhere.toml"]\n')
    with pytest.raises(SuiteError, match=r"include\[0\]: cannot read"):
        load_suite(top)


def test_stored_include_texts_win_over_the_disk(tmp_path):
    top = _write(tmp_path)
    suite = load_suite(top)
    (tmp_path / "base.toml").write_text(BASE.replace("identity", "rmsnorm"))  # edited after the run started
    again = parse_suite(suite.text, suite.source, suite.includes)
    assert [c.case_id for c in expand(again)] == [c.case_id for c in expand(suite)]
