"""A suite is expanded into cases once: validating it, its includes, `validate` and `run --dry-run` reuse them."""

from __future__ import annotations

import pytest

from normbench.benches import get_bench
from normbench.core.case import case_id
from normbench.suite.expand import expand
from normbench.suite.load import load_suite

BASE = 'name = "base"\n[[bench]]\nkind = "latency"\nnorms = ["identity"]\n[bench.sweep]\ntokens = [8, 16]\nd = [16]\n'
TOP = 'name = "top"\ninclude = ["base.toml"]\n[[bench]]\nkind = "latency"\nnorms = ["rmsnorm:module"]\n[bench.sweep]\ntokens = [8]\nd = [16, 32, 64]\n'


@pytest.fixture
def identity_calls(monkeypatch):
    """Every call of the latency bench's `identity` (made once per case it expands), counted."""
    bench = get_bench("latency")
    calls = []
    real = bench.identity

    def counted(params):
        calls.append(dict(params))
        return real(params)

    monkeypatch.setattr(bench, "identity", counted)
    return calls


@pytest.fixture
def top(tmp_path):
    (tmp_path / "base.toml").write_text(BASE)
    (tmp_path / "top.toml").write_text(TOP)
    return tmp_path / "top.toml"


def test_loading_and_expanding_a_suite_with_an_include_expands_each_case_once(top, identity_calls):
    suite = load_suite(top)
    assert len(identity_calls) == 5  # 2 included cases + 3 of its own, each expanded once
    cases = expand(suite)
    assert expand(suite) == cases and len(identity_calls) == 5  # expand() reuses them
    assert [(c.norm, c.params["tokens"], c.params["d"]) for c in cases] == [
        ("identity", 8, 16),
        ("identity", 16, 16),
        ("rmsnorm", 8, 16),
        ("rmsnorm", 8, 32),
        ("rmsnorm", 8, 64),
    ]
    # the ids are what an independent expansion gives: the hash of kind, norm, impl and the parameters,
    # less those added later and still at their default (reference, pairing: they never change an id)
    assert {"reference", "pairing"} <= set(cases[0].unhashed)
    for c in cases:
        hashed = {k: v for k, v in c.params.items() if k not in c.unhashed}
        assert c.case_id == case_id(c.kind, c.norm, c.impl, hashed)


@pytest.mark.parametrize("command", [("validate",), ("run", "--dry-run")])
def test_commands_expand_the_suite_once(cli, top, identity_calls, command):
    result = cli(*command, top)
    assert result.exit_code == 0, result.output
    assert len(identity_calls) == 5
