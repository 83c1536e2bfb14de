"""`export --format gab|bmf`: a run's timed cases as github-action-benchmark customSmallerIsBetter JSON and
Bencher Metric Format JSON, valid against each format's documented schema, with the stored medians and
spreads converted to ns, named by the parameters unlike the bench's defaults, with the paired ratio to the
reference as a second measure; untimed and failed cases left out and counted; nothing to export is exit 2."""

from __future__ import annotations

import json
import math
import re

import jsonschema
import pytest
from _stores import create_store

from normbench.core.case import Case

# Bencher's published JSON Schema for BMF (https://bencher.dev/docs/reference/bencher-metric-format/).
BMF_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema",
    "type": "object",
    "patternProperties": {
        ".+": {
            "type": "object",
            "patternProperties": {
                ".+": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "number"},
                        "lower_value": {"type": "number"},
                        "upper_value": {"type": "number"},
                    },
                    "required": ["value"],
                }
            },
        }
    },
}

# github-action-benchmark's BenchmarkResult (src/extract.ts) as a schema: what extractCustomBenchmarkResult
# reads from a customSmallerIsBetter file; an empty list is refused by the action.
GAB_SCHEMA = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "value": {"type": "number"},
            "unit": {"type": "string"},
            "range": {"type": "string"},
            "extra": {"type": "string"},
        },
        "required": ["name", "value", "unit"],
        "additionalProperties": False,
    },
}
GAB_RANGE = re.compile(r"(?P<prefix>(\+-|±)\s*)(?P<value>\d.+)")  # src/extractRangeInfo.ts

PARAMS = {"tokens": 8, "d": 16, "dtype": "fp32", "mode": "fwd", "device": "cpu"}
# the names: bench, norm:impl and the parameters unlike the latency bench's defaults (dtype, mode, device are)
LN, RMS = "latency layernorm:module d=16 tokens=8", "latency rmsnorm:module d=16 tokens=8"


def _timed(median: float, p20: float, p80: float, iqr: float, n: int = 4) -> list[dict]:
    rows = [{"metric": "time", "unit": "s", "value": median, "sample": i} for i in range(n)]
    stats = {"median": median, "p20": p20, "p80": p80, "iqr": iqr, "min": p20}
    return rows + [{"metric": f"time_{k}", "unit": "s", "value": v} for k, v in stats.items()]


@pytest.fixture
def stored(tmp_path):
    """A run of two timed cases, one failed latency case and one untimed (jacobian) case, known values."""
    cases = [
        Case("latency", "layernorm", "module", PARAMS, 0, "c-ln"),
        Case("latency", "rmsnorm", "module", PARAMS, 0, "c-rms"),
        Case("latency", "dyt", "module", PARAMS, 0, "c-bad"),
        Case("jacobian", "layernorm", "module", {"d": 16}, 1, "c-jac"),
    ]
    manifest = {"run_id": "run-a", "started": "", "env": {}, "cases": [{"case_id": c.case_id, "label": c.label} for c in cases]}  # fmt: skip
    store = create_store(tmp_path, manifest)
    store.write_case(cases[0], _timed(2.5e-6, 2.0e-6, 3.0e-6, 0.5e-6), "ok", None)
    store.write_case(cases[1], _timed(1.25e-5, 1.0e-5, 1.5e-5, 0.25e-5), "ok", None)
    store.write_case(cases[2], [], "failed", "boom")
    store.write_case(cases[3], [{"metric": "sigma_max", "unit": "1", "value": 1.0}], "ok", None)
    return tmp_path, cases


def test_bmf_holds_the_stored_median_and_percentiles_in_ns(cli, stored, tmp_path):
    results, cases = stored
    out = tmp_path / "bmf.json"
    done = cli("export", "run-a", "--format", "bmf", "-o", out, "--results", results)
    assert done.exit_code == 0, done.output
    data = json.loads(out.read_text())
    jsonschema.validate(data, BMF_SCHEMA)
    assert data == {
        LN: {"latency": {"value": 2500.0, "lower_value": 2000.0, "upper_value": 3000.0}},
        RMS: {"latency": {"value": 12500.0, "lower_value": 10000.0, "upper_value": 15000.0}},
    }
    line = done.stderr.strip()
    assert line.startswith(f"wrote {out}: timed cases: 2 (median ns and spread); not exported: ")
    assert "1 failed cases" in line and "1 jacobian cases (no timing rows)" in line


def test_gab_holds_the_median_and_half_the_iqr_in_ns(cli, stored):
    results, cases = stored
    done = cli("export", "run-a", "--format", "gab", "-o", "-", "--results", results)
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    jsonschema.validate(data, GAB_SCHEMA)
    assert [(d["name"], d["unit"], d["value"], d["range"]) for d in data] == [
        (LN, "ns", 2500.0, "± 250.0"),
        (RMS, "ns", 12500.0, "± 1250.0"),
    ]
    assert float(GAB_RANGE.search(data[1]["range"])["value"]) == 1250.0
    assert data[0]["extra"] == "median of 4 samples; p20 2000.0 ns, p80 3000.0 ns; run run-a"


def test_a_real_run_exports_every_case_in_both_formats(cli, tiny_run, tmp_path):
    results, run_id = tiny_run
    rows = {}
    for fmt in ("gab", "bmf"):
        done = cli("export", run_id, "-f", fmt, "-o", tmp_path / f"{fmt}.json", "--results", results)
        assert done.exit_code == 0, done.output
        rows[fmt] = json.loads((tmp_path / f"{fmt}.json").read_text())
    jsonschema.validate(rows["gab"], GAB_SCHEMA)
    jsonschema.validate(rows["bmf"], BMF_SCHEMA)
    manifest = json.loads((results / run_id / "manifest.json").read_text())
    times = [d for d in rows["gab"] if d["unit"] == "ns"]
    assert len(times) == len(manifest["cases"]) == len(rows["bmf"])
    assert sorted(d["name"] for d in times) == sorted(rows["bmf"])
    for d in times:
        assert "dtype=" not in d["name"] and "device=" not in d["name"]  # defaults left out
        m = rows["bmf"][d["name"]]["latency"]
        assert d["value"] == m["value"] and m["lower_value"] <= m["value"] <= m["upper_value"]
    ratios = [d for d in rows["gab"] if d["unit"] == "x"]
    assert ratios and all(d["name"].endswith(" ÷ reference") for d in ratios)
    for d in ratios:  # the same paired ratio in both formats, within its interval
        m = rows["bmf"][d["name"].removesuffix(" ÷ reference")]["time_vs_ref"]
        assert abs(d["value"] - m["value"]) < 1e-6  # no interval below 6 rounds: the bounds are left out
        assert m.get("lower_value", 0) <= m["value"] <= m.get("upper_value", math.inf)


def test_nothing_timed_is_one_line_and_exit_2(cli, stored, tmp_path):
    results, _ = stored
    store = create_store(results, {"run_id": "run-b", "started": "", "env": {}})
    store.write_case(Case("jacobian", "layernorm", "module", {"d": 16}, 0, "j"), [], "ok", None)
    out = tmp_path / "none.json"
    done = cli("export", "run-b", "-f", "gab", "-o", out, "--results", results)
    assert done.exit_code == 2 and not out.exists()
    assert done.stderr.startswith("error: nothing to export: no case with status ok has timing rows")


def test_one_run_twice_is_refused(cli, stored, tmp_path):
    results, _ = stored
    done = cli("export", "run-a", "latest", "-f", "bmf", "-o", tmp_path / "x.json", "--results", results)
    assert done.exit_code == 2 and "a run given twice (run-a, run-a)" in done.stderr
