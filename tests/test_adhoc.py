"""`normbench run --bench KIND --PARAM VALUE`: flags from the bench's parameter specs become a suite that is
validated like a file (every problem at once, named by flag), stored in the manifest, and whose cases are
the same cases (same ids) as a TOML suite's, so report and compare treat the run as any other."""

from __future__ import annotations

import json
import tomllib

from normbench.suite.adhoc import adhoc_toml

TINY = [
    "--samples",
    "3",
    "--warmup-calls",
    "0",
    "--min-sample-s",
    "1e-4",
    "--min_run_s=0",
    "--copy-probe",
    "false",
]


def test_flags_become_a_suite_text():
    text, problems = adhoc_toml(
        "latency", "layernorm,rmsnorm:composite", ["--tokens", "64", "--d", "16,32", *TINY]
    )
    assert problems == []
    suite = tomllib.loads(text)
    (bench,) = suite["bench"]
    assert bench["kind"] == "latency" and bench["norms"] == ["layernorm", "rmsnorm:composite"]
    assert bench["sweep"] == {"d": [16, 32]}  # a comma list is a sweep
    assert bench["params"] == {
        "tokens": 64,
        "samples": 3,
        "warmup_calls": 0,
        "min_sample_s": 1e-4,
        "min_run_s": 0.0,
        "copy_probe": False,
    }


def test_every_problem_at_once_named_by_flag(cli, tmp_path):
    result = cli(
        "run", "--bench", "latency", "--norms", "layernorm,rmsnrm", "--tokns", "4", "--d", "8,x",
        "--dtype", "bf17", "--results", tmp_path,
    )  # fmt: skip
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[:5] == [
        "<command line>: --tokns: not a parameter of bench kind 'latency' (did you mean '--tokens'?); it takes "
        "tokens, d, dtype, mode, device, cache, cuda_graph, input, eps, samples, warmup_calls, min_sample_s, "
        "min_run_s, seed, placements, copy_probe, reference, pairing, accuracy_rows, memory, stat, preset",
        "<command line>: --norms: unknown norm 'rmsnrm'; one of batchnorm, dyt, identity, layernorm, powernorm, "
        "rmsnorm (did you mean 'rmsnorm'?)",
        "<command line>: --d: 'x' is not an integer",
        "<command line>: --dtype: 'bf17' is not one of fp32, bf16, fp16, fp64 (did you mean 'bf16'?)",
        "<command line>: --tokens: required for this bench kind",
    ]
    assert lines[5] == "<command line>: 5 problems; nothing was run"
    assert not tmp_path.joinpath("results").exists() and not any(tmp_path.iterdir())


def test_bench_flag_mistakes(cli, tmp_path):
    bad_kind = cli("run", "--bench", "latancy", "--results", tmp_path)
    assert bad_kind.exit_code == 2 and "(did you mean 'latency'?)" in bad_kind.stderr
    norms_alone = cli("run", "--norms", "layernorm", "--results", tmp_path)
    assert norms_alone.exit_code == 2 and "--norms needs --bench KIND" in norms_alone.stderr
    with_suite = cli("run", "quick", "--bench", "latency", "--tokens", "8", "--d", "8", "--results", tmp_path)
    assert with_suite.exit_code == 2 and "give no suite file" in with_suite.stderr
    no_bench = cli("run", "quick", "--tokens", "8", "--results", tmp_path)  # only --bench opens the flags
    assert no_bench.exit_code == 2 and "No such option" in no_bench.stderr


def test_adhoc_run_report_and_compare_against_a_toml_run(cli, tmp_path, tiny_suite, write_suite):
    results = tmp_path / "results"
    flags = ["--bench", "latency", "--norms", "layernorm:module", "--tokens", "8", "--d", "16", *TINY]
    adhoc = cli("run", *flags, "--results", results)
    assert adhoc.exit_code == 0, adhoc.output
    # the summary, at once: the per-shape answer
    assert "per shape: fastest" in adhoc.stdout and "8×16  layernorm:module" in adhoc.stdout
    (adhoc_id,) = [p.name for p in results.iterdir()]
    manifest = json.loads((results / adhoc_id / "manifest.json").read_text())
    assert manifest["suite_source"] == "<command line>" and 'kind = "latency"' in manifest["suite_text"]

    params = "[bench.params]\ntokens = 8\nd = 16\nsamples = 3\nwarmup_calls = 0\nmin_sample_s = 1e-4\nmin_run_s = 0\ncopy_probe = false\n"
    suite = write_suite(tiny_suite(norms='["layernorm:module"]', sweep="", params=params))
    toml = cli("run", suite, "--quiet", "--results", results)
    assert toml.exit_code == 0, toml.output
    (toml_id,) = [p.name for p in results.iterdir() if p.name != adhoc_id]
    ids = [
        {c["case_id"] for c in json.loads((results / r / "manifest.json").read_text())["cases"]}
        for r in (adhoc_id, toml_id)
    ]
    assert ids[0] == ids[1] and len(ids[0]) == 1  # the same case, whichever way it was asked for

    report = cli("report", adhoc_id, "--results", results)
    assert report.exit_code == 0 and "Latency: median time per call" in report.stdout
    # --allow-load: a shared test machine; --absolute: the one case is the reference itself, without a copy
    # probe: no paired ratio to compare; --factor 100: 3 samples a side cannot test a change (it would be
    # undetectable, exit 3); the point here is that the two runs' cases match
    compare = cli(
        "compare",
        toml_id,
        adhoc_id,
        "--results",
        results,
        "--format",
        "json",
        "--allow-load",
        "--absolute",
        "--factor",
        "100",
    )
    assert compare.exit_code == 0, compare.output
    (record,) = [r for r in json.loads(compare.stdout)["records"] if r["metric"] == "time"]
    assert record["mark"] != "x" and record["base"] > 0 and record["new"] > 0  # compared, not "only in one"
