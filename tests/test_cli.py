"""Every spine command works end to end through Typer's runner, and `normbench --help` stays torch-free."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from normbench.norms import all_norms
from normbench.results.store import RunStore
from normbench.suite.expand import expand
from normbench.suite.load import load_suite

REPO = Path(__file__).resolve().parent.parent


# -- run --------------------------------------------------------------------------------------------
def test_dry_run_prints_the_cases_and_runs_nothing(cli, write_suite, tiny_suite, tmp_path):
    suite = write_suite(tiny_suite(sweep="tokens = [8]\nd = [16, 32]"))
    result = cli("run", suite, "--dry-run", "--results", tmp_path / "results")
    assert result.exit_code == 0, result.output
    cases = expand(load_suite(suite))
    assert result.stdout.splitlines() == [f"{c.case_id}  {c.label}" for c in cases] + ["12 cases"]
    assert not (tmp_path / "results").exists()


def test_only_runs_the_matching_cases_and_remembers_the_selection(cli, write_suite, tiny_suite, tmp_path):
    suite = write_suite(tiny_suite(sweep="tokens = [8]\nd = [16, 32]"))
    dry = cli("run", suite, "--dry-run", "--only", "*:composite", "--only", "rmsnorm:module")
    assert dry.exit_code == 0, dry.output
    labels = [line.split("  ", 1)[1] for line in dry.stdout.splitlines()[:-1]]
    assert dry.stdout.splitlines()[-1] == "6 cases"
    assert all(":composite " in lab or "rmsnorm:module " in lab for lab in labels)

    results = tmp_path / "results"
    run = cli("run", suite, "--only", "rmsnorm:module", "--quiet", "--results", results)
    assert run.exit_code == 0, run.output
    store = RunStore.open(results, "latest")
    assert store.manifest["only"] == ["rmsnorm:module"]
    assert [c["label"].split()[1] for c in store.manifest["cases"]] == ["rmsnorm:module"] * 2
    assert set(store.read()["impl"]) == {"module"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--only", "no-such-case"], "error: no case matches the --only/--shard selection"),
        (["--shard", "3/2"], "error: --shard '3/2': need 1 <= i <= N"),
        (["--shard", "half"], "error: --shard 'half': expected i/N, e.g. 2/8"),
    ],
)
def test_bad_selection_exits_2(cli, write_suite, tiny_suite, args, message):
    result = cli("run", write_suite(tiny_suite()), "--dry-run", *args)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == message


def test_run_without_a_suite_says_what_to_give(cli):
    result = cli("run")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: give a suite file")


def test_run_without_progress_output_when_quiet_and_one_line_per_case_otherwise(
    cli, write_suite, tiny_suite, tmp_path
):
    suite = write_suite(tiny_suite(norms='["identity"]', sweep="tokens = [8]\nd = [16, 32]"))
    quiet = cli("run", suite, "--quiet", "--results", tmp_path / "a")
    assert quiet.exit_code == 0 and "[1/2]" not in quiet.stderr
    loud = cli("run", suite, "--results", tmp_path / "b")
    assert loud.exit_code == 0
    # each line: done/total, status, the case's own time, the case; the last adds elapsed and an ETA
    first, last = (re.search(rf"^\[{i}/2\] ok .*$", loud.stderr, re.M)[0] for i in (1, 2))
    assert re.fullmatch(r"\[1/2\] ok\s+\d+\.\ds  latency identity:copy tokens=8 d=16", first)
    assert re.fullmatch(
        r"\[2/2\] ok\s+\d+\.\ds  latency identity:copy tokens=8 d=32  \(elapsed \d+\.\ds, ETA 0\.0s\)",
        last,
    )


def test_progress_clock():
    from normbench.cli._progress import clock

    assert [clock(s) for s in (4.24, 65, 3599.6, 7380)] == ["4.2s", "1m05s", "1h00m", "2h03m"]


# -- validate -----------------------------------------------------------------------------------------
def test_validate_ok_and_bad_together(cli, write_suite, tiny_suite):
    good = write_suite(tiny_suite(sweep="tokens = [8]\nd = [16, 32]"), "good.toml")
    bad = write_suite(tiny_suite().replace("d = [16]", "d = [-1]"), "bad.toml")
    ok = cli("validate", good)
    assert ok.exit_code == 0
    assert ok.stdout == f"{good}: ok — 12 cases (12 latency)\n"
    both = cli("validate", good, bad)
    assert both.exit_code == 2
    assert f"{good}: ok — 12 cases (12 latency)" in both.stdout
    assert both.stderr.splitlines()[:2] == [
        f"{bad}: bench[0].sweep.d[0]: -1 must be >= 1",
        f"{bad}: 1 problem; nothing was run",
    ]


def test_validate_missing_file(cli, tmp_path):
    result = cli("validate", tmp_path / "nope.toml")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == f"error: {tmp_path / 'nope.toml'}: no such suite file"


# -- list ---------------------------------------------------------------------------------------------
def test_list_norms_shows_every_impl_and_marks_the_baseline(cli):
    result = cli("list", "norms")
    assert result.exit_code == 0
    for norm in all_norms().values():
        for impl in norm.impls:
            mark = "*" if impl == norm.baseline else " "
            assert f"    {mark} {norm.name}:{impl}" in result.stdout


def test_list_benches_shows_each_parameter_spec(cli):
    from normbench.benches import all_benches

    result = cli("list", "benches")
    assert result.exit_code == 0
    for bench in all_benches().values():
        assert f"  {bench.kind}" in result.stdout
        for key, spec in bench.params.items():
            assert " ".join(f"{key} {spec.describe()}".split()) in " ".join(result.stdout.split())
    assert "dtype            str; one of fp32, bf16, fp16, fp64; default 'fp32'" in result.stdout


def test_list_suites_shipped_and_local(cli, monkeypatch, tmp_path, tiny_suite):
    """The checkout's suites are the shipped ones (listed once, by name, with case counts); a suite in
    ./suites that is not shipped is listed as local."""
    monkeypatch.chdir(REPO)
    result = cli("list", "suites")
    assert result.exit_code == 0
    origins = re.findall(r"^  \S+ +(shipped|local) +\d+ cases", result.stdout, re.M)
    assert "  quick " in result.stdout and "shipped" in origins and "local" not in origins
    (tmp_path / "suites").mkdir()
    body = tiny_suite(name="mine", norms='["layernorm:module"]', sweep="tokens = [8]\nd = [16, 32]")
    (tmp_path / "suites" / "mine.toml").write_text(
        body.replace('name = "mine"', 'name = "mine"\ndescription = "My own. More."')
    )
    monkeypatch.chdir(tmp_path)
    result = cli("list", "suites")
    assert "suites/mine.toml   local        2 cases  My own" in result.stdout


def test_list_runs(cli, tiny_run):
    results, run_id = tiny_run
    result = cli("list", "runs", "--results", results)
    assert result.exit_code == 0
    (line,) = [ln for ln in result.stdout.splitlines() if run_id in ln]
    assert line.split()[1:] == ["complete", "12/12", "cases"]


# -- report -------------------------------------------------------------------------------------------
def _stored_medians(results, run_id) -> dict[tuple[str, int], float]:
    frame = RunStore.open(results, run_id).read()
    med = frame[frame["metric"] == "time_median"]
    return {(f"{r.norm}:{r.impl}", int(r.d)): r.value for r in med.itertuples()}


def test_report_json_records_are_the_stored_medians(cli, tiny_run):
    results, run_id = tiny_run
    result = cli("report", run_id, "--format", "json", "--results", results)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["runs"] == [run_id]
    assert all(w.startswith("busy machine") for w in doc["warnings"])  # complete, one run: nothing else
    medians = _stored_medians(results, run_id)
    records = {(f"{r['norm']}:{r['impl']}", r["d"]): r for r in doc["records"]}
    assert set(records) == set(medians)
    for (column, hidden), median in medians.items():
        r = records[column, hidden]
        assert r["time_median_s"] == median and r["time_s"] == median  # numbers, not "176 µs !"
        base = medians["layernorm:module", hidden]
        assert r["speedup_vs_baseline"] == pytest.approx(base / median)


def _tables_start(text: str, title: str) -> bool:
    """The report starts with this table, after the busy-machine warning when there is one."""
    chunks = text.split("\n\n")
    return chunks[0].startswith(title) or ("busy machine" in chunks[0] and chunks[1].startswith(title))


@pytest.mark.parametrize(
    ("fmt", "check"),
    [
        # the terminal view: the summary, then tables fitted to the width (headers stacked: "layernorm:" over "module")
        (
            "github",
            lambda t: (
                t.startswith("Summary\n") and "### Latency: median time per call" in t and "| layernorm:" in t
            ),
        ),
        ("md", lambda t: t.startswith("# normbench report") and "### Latency: median time per call" in t),
        (
            "plain",
            lambda t: t.startswith("Summary\n") and "\n\nLatency: median time per call" in t and "|" not in t,
        ),
        # a busy machine (the load above the core count) puts a Warnings table first
        ("latex", lambda t: _tables_start(t, "% Latency: median time per call") and "\\begin{tabular}" in t),
        ("csv", lambda t: t.startswith("run_id,bench,norm,impl,status,error,case_id,")),
    ],
)
def test_report_formats(cli, tiny_run, fmt, check):
    results, run_id = tiny_run
    result = cli("report", "--format", fmt, "--results", results)  # 'latest' by default
    assert result.exit_code == 0, result.output
    assert check(result.stdout), result.stdout
    if fmt == "md":
        assert f"run `{run_id}`: suite `tiny`" in result.stdout


def test_report_csv_is_one_numeric_table(cli, tiny_run):
    """pd.read_csv reads it whole: one record per case, times and ratios as numbers."""
    import pandas as pd

    results, run_id = tiny_run
    text = cli("report", run_id, "--format", "csv", "--results", results).stdout
    frame = pd.read_csv(io.StringIO(text))
    assert len(frame) == 12 and frame["case_id"].is_unique
    for column in ("time_s", "time_median_s", "time_iqr_s", "speedup_vs_baseline", "d"):
        assert frame[column].dtype.kind in "fi", column
    assert set(frame["norm"] + ":" + frame["impl"]) == set(
        f"{n}:{i}"
        for n in ("layernorm", "rmsnorm")
        for i, info in all_norms()[n].impls.items()
        if info.default
    )


def test_report_to_a_file_and_bad_format(cli, tiny_run, tmp_path):
    results, run_id = tiny_run
    out = tmp_path / "report.md"
    result = cli("report", run_id, "--format", "md", "--output", out, "--results", results)
    assert result.exit_code == 0 and result.stdout == f"wrote {out}\n"
    assert out.read_text().startswith("# normbench report")
    bad = cli("report", run_id, "--format", "xlsx", "--results", results)
    assert bad.exit_code == 2
    assert "'xlsx' is not one of" in bad.stderr and "'latex'" in bad.stderr


# -- env and help -------------------------------------------------------------------------------------
def test_env_json(cli):
    import torch

    result = cli("env", "--json")
    assert result.exit_code == 0
    env = json.loads(result.stdout)
    assert env["torch"] == torch.__version__ and env["cpu_count"] == os.cpu_count()
    assert (
        env["torch_threads"] == torch.get_num_threads() and env["cuda_available"] == torch.cuda.is_available()
    )
    assert env["python"] == ".".join(map(str, sys.version_info[:3]))


HELP_PROBE = """
import json, sys, time
t0 = time.perf_counter()
from normbench.cli import app
try:
    app(["--help"])
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in ("torch", "pandas", "numpy", "pyarrow", "matplotlib", "scipy") if m in sys.modules)
print(json.dumps({"code": code, "heavy": heavy, "seconds": time.perf_counter() - t0}))
"""


def test_help_does_not_import_torch(child_env, record_property):
    proc = subprocess.run(
        [sys.executable, "-c", HELP_PROBE], capture_output=True, text=True, env=child_env(), timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    probe = json.loads(proc.stdout.splitlines()[-1])
    assert probe["code"] == 0
    assert "torch" not in probe["heavy"], probe
    for command in ("run", "validate", "list", "report", "env"):
        assert command in proc.stdout
    record_property("help_import_modules", probe["heavy"])

    script = Path(sys.executable).with_name("normbench")
    if script.exists():  # the console script, as a user runs it: wall time recorded, never asserted
        start = time.perf_counter()
        done = subprocess.run(
            [str(script), "--help"], capture_output=True, text=True, env=child_env(), timeout=60
        )
        record_property("help_wall_s", round(time.perf_counter() - start, 3))
        assert done.returncode == 0 and "Usage" in done.stdout


# -- plot -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["png", "pdf"])
def test_plot_writes_figures(cli, tiny_run, tmp_path, fmt):
    results, run_id = tiny_run
    out = tmp_path / "figs"
    result = cli("plot", run_id, "--results", results, "--out", out, "--format", fmt)
    assert result.exit_code == 0, result.output
    written = sorted(out.glob(f"*.{fmt}"))
    assert written and all(p.stat().st_size > 1000 for p in written)
    assert [str(p) for p in written] == sorted(result.stdout.split())


def test_plot_refuses_an_unknown_format(cli, tiny_run, tmp_path):
    results, run_id = tiny_run
    result = cli("plot", run_id, "--results", results, "--out", tmp_path / "f", "--format", "gif")
    # an Enum option: click names the choices (and --help shows them)
    assert result.exit_code == 2 and "'gif' is not one of" in result.stderr and "'pdf'" in result.stderr
