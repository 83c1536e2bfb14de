"""Case labels in the "not ok" table and in compare show every parameter that tells cases apart (one that
varies among the run's cases of a bench kind is shown even at its default), and the report warns when a run
mixes nodes of different hardware."""

from __future__ import annotations

import json

import pandas as pd

from normbench.analysis.failures import failures_table
from normbench.analysis.rows import describe_case, varying_params
from normbench.benches import get_bench


def case(case_id: str, status: str, **params) -> dict:
    return {
        "case_id": case_id,
        "bench": "stability",
        "norm": "layernorm",
        "impl": "module",
        "status": status,
        "error": None,
        "params": json.dumps(params, sort_keys=True),
    }


def test_a_parameter_that_varies_is_shown_at_its_default():
    frame = pd.DataFrame(
        [
            case("a", "stuck", placement="post", depth=12, seed=0),
            case("b", "ok", placement="pre", depth=12, seed=0),
        ]
    )
    table = failures_table(frame)
    assert table.frame["case"].tolist() == ["layernorm:module depth=12 placement=post"]  # params JSON order


def test_nothing_varies_only_non_defaults_are_shown():
    bench = get_bench("stability")
    params = {"placement": "post", "depth": 12, "seed": 0}
    assert describe_case("layernorm", "module", params, bench) == "layernorm:module depth=12"
    assert varying_params(pd.Series([json.dumps(params)] * 2)) == frozenset()


def test_report_warns_when_a_run_mixes_node_hardware():
    """A Ray run whose nodes differ (here the CPU) gets a warning naming both kinds; one kind, no warning."""
    from normbench.analysis.report import mixed_hardware_warning

    node = {"cpu": "EPYC", "cpu_count": 16, "gpu": None, "torch": "2.13.0", "cuda": None}
    manifest = {"run_id": "r", "nodes": {"n1": node, "n2": {**node, "cpu": "Xeon"}}}
    frame = pd.DataFrame({"ray_node": ["n1", "n2"]})
    warning = mixed_hardware_warning(frame, [manifest])
    assert "cpu=EPYC" in warning and "cpu=Xeon" in warning
    same = {"run_id": "r", "nodes": {"n1": node, "n2": dict(node)}}
    assert mixed_hardware_warning(frame, [same]) is None
