"""docs/extending.md "Adding a norm" is complete: its code block, run as a module, registers a norm that lists its
capabilities, validates in a suite, and runs latency (with accuracy rows), jacobian (closed form agrees)
and block cases in-process."""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest
from conftest import REPO
from latency_helpers import per_tensor, run

from normbench.norms import registry


def readme_norm_code() -> str:
    text = (REPO / "docs" / "extending.md").read_text()
    section = text[text.index("## Adding a norm") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.fixture(scope="module")
def softsign(tmp_path_factory):
    path = tmp_path_factory.mktemp("readme") / "readme_softsign.py"
    path.write_text(readme_norm_code())
    spec = importlib.util.spec_from_file_location("readme_softsign", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_softsign"] = module
    spec.loader.exec_module(module)
    yield registry.get_norm("softsign")
    registry.NORMS.remove("softsign")  # leave the registry as the other tests expect it
    sys.modules.pop("readme_softsign", None)


def test_declares_what_it_has(softsign):
    caps = softsign.capabilities()
    assert caps == {"exact": True, "jacobian": True, "module": True, "fold": False, "mixes_tokens": False}


def test_latency_case_has_accuracy_rows(softsign):
    m, rows, status, error = run("latency", "softsign", "module", tokens=16, d=32, mode="fwd+bwd")
    assert status == "ok", error
    assert m["time_median"] > 0
    errs = per_tensor(rows, "err_abs")
    assert set(errs) == {"y", "dx", "dweight", "dbias"}
    assert max(errs.values()) < 1e-5  # fp32 against float64


def test_jacobian_case_matches_its_closed_form(softsign):
    m, rows, status, error = run("jacobian", "softsign", "module", d=8, gain="random", inputs=2)
    assert status == "ok", error
    rel = [r["value"] for r in rows if r["metric"] == "rel_err"]
    assert len(rel) == 2 and max(abs(v) for v in rel) < 1e-10


def test_block_case_runs_and_validates(softsign):
    from normbench.suite.load import parse_suite

    parse_suite(
        'name = "b"\n[[bench]]\nkind = "block"\n[bench.params]\nblock = "softsign"\ntokens = 8\nd = 8\n'
    )
    with pytest.raises(Exception, match="softsign_folded"):
        parse_suite(
            'name = "b"\n[[bench]]\nkind = "block"\n[bench.params]\nblock = "softsign_folded"\ntokens = 8\n'
            "d = 8\n"
        )
    m, rows, status, error = run("block", None, None, block="softsign", tokens=16, d=16)
    assert status == "ok", error
    assert per_tensor(rows, "err_abs")["y"] < 1e-5 and m["time_median"] > 0


def test_a_builder_may_call_the_width_otherwise():
    """The page's promise: builders get d positionally, so a plugin written as `hidden` still builds."""

    class Older(registry.Norm):
        name = "older"

        @registry.impl("module")
        def module(self, hidden, *, eps, dtype, device):
            return registry.Built(lambda x: x * hidden)

        def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
            return tokens * hidden * itemsize

    Older.impls = {"module": Older.module._normbench_impl}  # as register_norm, without registering
    assert Older().build("module", 3, eps=1e-5, dtype=None, device="cpu").fn(2) == 6
    assert Older().bytes_moved("module", 2, 3, 4, "fwd") == 24
