"""One `normbench ab` process: a case whose optional kernel is missing at base and head is recorded as
unavailable (the gate marks it = and says why), a case that fails for another reason is not, the timed
case gets its head/base and A/A ratios, and every key the worker reads of its plan (the page state among
them) is one its parent writes."""

from __future__ import annotations

import ast
import json
import sys

from normbench.ab import gate, worker
from normbench.ab.options import ABOptions
from normbench.norms import get_norm
from normbench.norms.registry import Built, Norm, impl
from normbench.suite.expand import expand
from normbench.suite.load import load_suite
from normbench.timing.fresh import Fresh


class Missing(Norm):
    name = "abmissing"

    @impl("kernel", requires=("normbench_no_such_module",))
    def kernel(self, d, *, eps, dtype, device):
        raise AssertionError("never built: its requirement is missing")

    @impl("broken")
    def broken(self, d, *, eps, dtype, device):
        return Built(lambda x: 1 / 0)


# what register_norm would do, without adding the norm to the registry other tests read
Missing.impls = {f._normbench_impl.name: f._normbench_impl for f in (Missing.kernel, Missing.broken)}
Missing.module_impl = None


def test_a_kernel_missing_on_both_sides_is_unavailable_and_a_failure_is_not(
    tmp_path, monkeypatch, tiny_suite
):
    (tmp_path / "s.toml").write_text(tiny_suite(norms='["layernorm:module"]'))
    (case,) = expand(load_suite(tmp_path / "s.toml"))
    PARAMS = case.params
    norms = {"abmissing": Missing()}
    lookup = lambda name: norms[name] if name in norms else get_norm(name)  # noqa: E731
    monkeypatch.setattr(worker, "get_norm", lookup)
    monkeypatch.setattr("normbench.ab.timing.get_norm", lookup)
    cases = [
        {"case_id": "missing", "kind": "latency", "norm": "abmissing", "impl": "kernel", "params": PARAMS},
        {"case_id": "broken", "kind": "latency", "norm": "abmissing", "impl": "broken", "params": PARAMS},
        {"case_id": "timed", "kind": "latency", "norm": "layernorm", "impl": "module", "params": PARAMS},
    ]
    plan, out = tmp_path / "plan.json", tmp_path / "out.jsonl"
    plan.write_text(
        json.dumps({"root": str(tmp_path), "tree": None, "seed": 1, "threads": 1, "cases": cases})
    )
    assert worker.main(str(plan), str(out)) == 0
    records = {r["case_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert (
        records["missing"]["unavailable"] is True
        and "normbench_no_such_module" in records["missing"]["error"]
    )
    assert records["broken"]["unavailable"] is False and "ZeroDivisionError" in records["broken"]["error"]
    assert records["timed"]["ab"] > 0 and records["timed"]["aa"] > 0 and records["timed"]["head_min_s"] > 0


def _keys_read(module) -> set[str]:
    """The keys `main` reads of its plan: plan["key"] and plan.get("key")."""
    keys = set()
    for node in ast.walk(ast.parse(open(module.__file__).read())):
        if isinstance(node, ast.Subscript) and getattr(node.value, "id", None) == "plan":
            keys.add(node.slice.value)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "get":
            if getattr(node.func.value, "id", None) == "plan":
                keys.add(node.args[0].value)
    return keys


def test_every_plan_key_the_worker_reads_is_written_and_the_page_state_reaches_it(monkeypatch, tmp_path):
    plans = []

    def fresh(module, plan, python=None):
        plans.append((module, python, plan))
        return Fresh([], 0, "")

    monkeypatch.setattr(gate, "run_fresh", fresh)
    opts = ABOptions(processes=2, threads=1)
    gate.run_workers([], root=tmp_path, tree=tmp_path, opts=opts, pages="base", say=lambda _: None)
    assert [(m, p) for m, p, _ in plans] == [("normbench.ab.worker", sys.executable)] * 2
    for _, _, plan in plans:
        assert plan["pages"] == "base" and plan["threads"] == 1
        assert _keys_read(worker) <= set(plan), _keys_read(worker) - set(plan)
    assert "pages" in _keys_read(worker)
