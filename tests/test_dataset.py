"""A run is one dataset: every part has the run's declared columns and types, so pandas, pyarrow, duckdb and polars read it whole with no options; load(), export and the README's examples give the same rows."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _dataset_support import KINDS, LATENCY
from typer.testing import CliRunner

from normbench.benches import get_bench
from normbench.cli import app
from normbench.results.schema import FIXED_COLUMNS, SCHEMA_VERSION, check_rows, declare_columns
from normbench.results.store import RunStore

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def runs(dataset_runs):
    return dataset_runs


def _expected_columns() -> dict[str, str]:
    from normbench.benches import all_benches

    benches = all_benches()
    names = {n for k in KINDS for n in [*benches[k].params, *benches[k].labels]} - set(FIXED_COLUMNS)
    columns = declare_columns([benches[k] for k in KINDS])
    assert list(columns) == FIXED_COLUMNS + sorted(names)
    return columns


def test_every_part_has_the_declared_columns_and_types(runs):
    results, mixed, _ = runs
    store = RunStore.open(results, mixed)
    columns = _expected_columns()
    assert store.manifest["columns"] == columns and store.manifest["schema_version"] == SCHEMA_VERSION
    parts = sorted(store.parts.glob("*.parquet"))
    assert {pq.read_table(p, columns=["bench"])["bench"][0].as_py() for p in parts} == set(KINDS)
    for part in parts:
        schema = pq.read_schema(part)
        assert [(f.name, str(f.type)) for f in schema] == [
            (n, {"float64": "double", "bool": "bool"}.get(t, t)) for n, t in columns.items()
        ], part.name
    for name, kind in (("d", "int64"), ("layer", "int64"), ("copy_probe", "bool"), ("eps", "float64")):
        assert columns[name] == kind


def test_four_readers_need_no_options(runs):
    import duckdb
    import polars as pl
    import pyarrow.dataset as ds

    results, mixed, _ = runs
    parts = results / mixed / "parts"
    names = list(_expected_columns())
    frame = pd.read_parquet(parts)
    table = ds.dataset(parts).to_table()
    rel = duckdb.sql(f"select * from '{parts}/*.parquet'")
    polars_frame = pl.read_parquet(f"{parts}/*.parquet")
    n = len(frame)
    assert n == table.num_rows == rel.shape[0] == polars_frame.height > 100
    assert list(frame.columns) == table.column_names == rel.columns == polars_frame.columns == names
    # the declared types, in each tool's words (pandas: nullable Int64/boolean where another kind is null)
    assert (str(frame["d"].dtype), str(frame["copy_probe"].dtype), str(frame["eps"].dtype)) == (
        "Int64",
        "boolean",
        "float64",
    )
    assert (table.schema.field("d").type, table.schema.field("layer").type) == (pa.int64(), pa.int64())
    types = dict(zip(rel.columns, map(str, rel.dtypes), strict=True))
    assert (types["d"], types["copy_probe"], types["dtype"]) == ("BIGINT", "BOOLEAN", "VARCHAR")
    assert (polars_frame["d"].dtype, polars_frame["layer"].dtype) == (pl.Int64, pl.Int64)
    # a filter on a parameter only one bench kind has works and agrees across tools
    wide = duckdb.sql(f"select count(*) from '{parts}/*.parquet' where d = 32").fetchall()[0][0]
    assert wide == (frame["d"] == 32).sum() == polars_frame.filter(pl.col("d") == 32).height > 0


def test_load_is_the_store_read_with_integers_kept(runs, monkeypatch):
    import normbench

    results, mixed, latency = runs
    frame = normbench.load(mixed, results=results)
    assert str(frame["d"].dtype) == "Int64" and str(frame["sample"].dtype) == "Int64"
    pd.testing.assert_frame_equal(frame, RunStore.open(results, mixed).read())
    monkeypatch.setenv("NORMBENCH_RESULTS", str(results))
    both = normbench.load([mixed, latency])
    assert len(both) == len(frame) + len(RunStore.open(results, latency).read())
    assert list(both["run_id"].unique()) == [mixed, latency] and str(both["d"].dtype) == "Int64"


def test_runs_of_different_suites_combine_by_name(runs):
    import duckdb
    import polars as pl

    results, mixed, latency = runs
    globs = [str(results / r / "parts" / "*.parquet") for r in (mixed, latency)]
    lat_columns = pq.read_schema(next((results / latency / "parts").glob("*.parquet"))).names
    assert set(lat_columns) < set(_expected_columns())  # its own suite's columns only
    both = duckdb.sql(f"select * from read_parquet({globs}, union_by_name = true)")
    combined = pl.concat([pl.read_parquet(g) for g in globs], how="diagonal_relaxed")
    assert both.shape == combined.shape and both.shape[1] == len(_expected_columns())
    assert combined["d"].dtype == pl.Int64


def test_rows_that_do_not_fit_the_schema_are_named():
    columns = declare_columns([get_bench("latency")])
    rows = [{"metric": "m", "value": 1.0, "tensor": "y", "d": "wide", "colour": "red"}]
    kept, problem = check_rows(rows, columns)
    assert problem == "undeclared label column(s) colour (add them to the bench's `labels`); d is not int64"
    assert kept == [{"metric": "m", "value": 1.0, "tensor": "y"}]
    assert check_rows([{"metric": "m", "value": 2, "d": 8, "eps": 1}], columns) == (
        [{"metric": "m", "value": 2, "d": 8, "eps": 1}],
        None,
    )


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_export_writes_numbers_as_numbers(runs, tmp_path, fmt):
    results, mixed, latency = runs
    out = tmp_path / f"all.{fmt}"
    result = CliRunner().invoke(app, ["export", mixed, latency, "-o", str(out), "--results", str(results)])
    assert result.exit_code == 0, result.output
    expected = pd.concat([RunStore.open(results, r).read() for r in (mixed, latency)], ignore_index=True)
    got = {
        "parquet": lambda: pd.read_parquet(out),
        "csv": lambda: pd.read_csv(out),
        "jsonl": lambda: pd.read_json(out, lines=True),
    }[fmt]()
    assert got.shape == expected.shape and list(got.columns) == list(expected.columns)
    assert got["value"].dtype == "float64" and got["d"].dtype.kind in "if" or str(got["d"].dtype) == "Int64"
    assert got["value"].tolist() == pytest.approx(expected["value"].tolist(), nan_ok=True, rel=1e-15)


def test_readme_reading_results_examples_run(runs, tmp_path, monkeypatch):
    """The README's "Reading results" code blocks, run as they are against results/ holding two runs."""
    results, _, _ = runs
    shutil.copytree(results, tmp_path / "results")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NORMBENCH_RESULTS", raising=False)
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Reading results", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) >= 3
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})


def test_a_slice_of_the_suite_declares_the_whole_suites_columns(tmp_path):
    """--only/--shard run part of a suite; its parts still carry every column of the suite (shards concat)."""
    suite = tmp_path / "s.toml"
    suite.write_text(
        'name = "s"\n' + LATENCY + '\n[[bench]]\nkind = "jacobian"\nnorms = ["layernorm"]\n'
        "[bench.params]\nd = 4\ninputs = 1\n"
    )
    args = ["run", str(suite), "--quiet", "--only", "jacobian", "--results", str(tmp_path / "r")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    (run,) = (tmp_path / "r").iterdir()
    (part,) = (run / "parts").glob("*.parquet")
    assert pq.read_schema(part).names == list(declare_columns([get_bench("latency"), get_bench("jacobian")]))
    assert "d" in pq.read_schema(part).names  # a latency parameter, null in the jacobian case's rows


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_written_in_slices_is_the_text_of_the_whole_frame(runs, tmp_path, monkeypatch, fmt):
    from normbench.cli import export

    results, mixed, _ = runs
    monkeypatch.setattr(export, "ROWS_AT_ONCE", 7)  # many slices, the last one short
    out = tmp_path / f"all.{fmt}"
    result = CliRunner().invoke(app, ["export", mixed, "-o", str(out), "--results", str(results)])
    assert result.exit_code == 0, result.output
    frame = RunStore.open(results, mixed).read()
    assert len(frame) % 7 and len(frame) > 7
    assert out.read_text() == export._text(frame, fmt)
