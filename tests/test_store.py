"""The run store gives back exactly the rows it was given, with stable types, and refuses what it cannot read in one clear line."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from _stores import create_store

from normbench.core.case import Case, case_id
from normbench.core.errors import NormbenchError
from normbench.results.naming import latest_run_id, list_run_ids
from normbench.results.schema import FIXED_COLUMNS, SCHEMA_VERSION
from normbench.results.store import RunStore, read_runs

PARAMS = {"tokens": 8, "d": 16, "dtype": "fp32", "eps": 1e-5, "copy_probe": False}


def make_case(**changes) -> Case:
    params = {**PARAMS, **changes}
    return Case(
        "latency", "layernorm", "module", params, 0, case_id("latency", "layernorm", "module", params)
    )


def ok_rows(session: int = 0) -> list[dict]:
    rows = [
        {"metric": "time", "unit": "s", "value": 1e-6 * (i + 1), "sample": i, "session": session}
        for i in range(3)
    ]
    rows += [
        {"metric": "time_median", "unit": "s", "value": 2e-6, "session": session},
        {"metric": "grad_norm", "unit": "1", "value": 0.5, "layer": 3, "step": 7, "session": session},
        {"metric": "inner_loops", "unit": "calls", "value": 12, "session": session},
    ]  # an int value
    return rows


@pytest.fixture
def store(tmp_path):
    return create_store(tmp_path, {"run_id": "run-a", "started": "2026-01-01T00:00:00+00:00", "suite": "s"})


def test_rows_come_back_identical(store):
    ok, bad = make_case(), make_case(d=32)
    written = {
        ok.case_id: ok_rows(),
        bad.case_id: [{"metric": "case_wall_s", "unit": "s", "value": 0.25, "session": 1}],
    }
    store.write_case(ok, written[ok.case_id], "ok", None)
    store.write_case(bad, written[bad.case_id], "failed", "ValueError: broken")
    frame = RunStore.open(store.path.parent, "run-a").read()

    assert list(frame.columns[: len(FIXED_COLUMNS)]) == FIXED_COLUMNS
    assert len(frame) == 7
    for case, status, error in ((ok, "ok", None), (bad, "failed", "ValueError: broken")):
        got = frame[frame["case_id"] == case.case_id].reset_index(drop=True)
        assert set(got["run_id"]) == {"run-a"} and set(got["bench"]) == {"latency"}
        assert set(got["status"]) == {status}
        assert list(got["error"].fillna("<none>")) == [error or "<none>"] * len(got)
        assert all(json.loads(p) == case.params for p in got["params"])
        for key, value in case.params.items():  # each parameter is its own column
            assert list(got[key]) == [value] * len(got)
        for i, row in enumerate(written[case.case_id]):
            assert got.loc[i, "metric"] == row["metric"] and got.loc[i, "unit"] == row["unit"]
            assert got.loc[i, "value"] == row["value"]
            assert got.loc[i, "session"] == row["session"]
            for optional in ("sample", "step"):
                assert (got.loc[i, optional] == row[optional]) if optional in row else got[optional].isna()[i]
            assert (got.loc[i, "layer"] == row["layer"]) if "layer" in row else got["layer"].isna()[i]


def test_column_types_do_not_depend_on_which_cases_failed(store):
    """A failed case's part has no sample index; it must not turn `sample` into Python objects."""
    store.write_case(make_case(d=32), [], "failed", "RuntimeError: out of memory")
    only_failed = store.read()
    store.write_case(make_case(), ok_rows(), "ok", None)
    mixed = store.read()
    for frame in (only_failed, mixed):
        assert str(frame["value"].dtype) == "float64"
        for name in ("sample", "step", "session", "tokens", "d"):  # int64 with nulls stays integer
            assert str(frame[name].dtype) == "Int64", name
        assert str(frame["eps"].dtype) == "float64" and str(frame["copy_probe"].dtype) == "boolean"
    assert list(mixed.dropna(subset=["sample"])["sample"]) == [0, 1, 2]
    assert pq.read_table(next(store.parts.glob("*.parquet"))).schema.field("sample").type == "int64"


def test_parts_are_whole_and_named_by_case(store):
    cases = [make_case(d=h) for h in (16, 32, 48)]
    for c in cases:
        store.write_case(c, ok_rows(), "ok", None)
    assert store.finished_case_ids() == {c.case_id for c in cases}
    assert not [p for p in store.parts.iterdir() if p.suffix != ".parquet"]  # no temporary files left
    meta = pq.read_table(store.parts / f"{cases[0].case_id}.parquet").schema.metadata
    assert meta[b"normbench_schema_version"] == str(SCHEMA_VERSION).encode() and meta[b"run_id"] == b"run-a"


def test_manifest_round_trip_and_latest(tmp_path, store):
    store.update_manifest(status="complete", cases=[{"case_id": make_case().case_id}])
    later = create_store(tmp_path, {"run_id": "run-b", "started": "2026-01-02T00:00:00+00:00"})
    assert RunStore.open(tmp_path, "run-a").manifest == {**store.manifest, "schema_version": SCHEMA_VERSION}
    assert list_run_ids(tmp_path) == ["run-a", "run-b"]
    assert latest_run_id(tmp_path) == "run-b"
    assert RunStore.open(tmp_path, "latest").path == later.path
    later.write_case(make_case(), ok_rows(), "ok", None)
    store.write_case(make_case(), ok_rows(), "ok", None)
    frame, manifests = read_runs(tmp_path, ["run-a", "run-b"])
    assert sorted(set(frame["run_id"])) == ["run-a", "run-b"] and [m["run_id"] for m in manifests] == [
        "run-a",
        "run-b",
    ]


def _newer_manifest(store):
    path = store.path / "manifest.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "schema_version": SCHEMA_VERSION + 1}))
    return path


def _newer_part(store):
    store.write_case(make_case(), ok_rows(), "ok", None)
    part = next(store.parts.glob("*.parquet"))
    table = pq.read_table(part)
    pq.write_table(
        table.replace_schema_metadata({b"normbench_schema_version": str(SCHEMA_VERSION + 1).encode()}), part
    )
    return part


@pytest.mark.parametrize("make_newer", [_newer_manifest, _newer_part], ids=["manifest", "part"])
def test_newer_schema_version_is_refused(store, make_newer):
    path = make_newer(store)
    with pytest.raises(NormbenchError) as info:
        RunStore.open(store.path.parent, "run-a").read()
    assert str(info.value) == (
        f"{path}: written with result schema version {SCHEMA_VERSION + 1}; this normbench reads "
        f"up to {SCHEMA_VERSION}. Upgrade normbench to read it."
    )


def test_part_without_a_schema_version_is_not_a_normbench_result(store):
    store.write_case(make_case(), ok_rows(), "ok", None)
    part = next(store.parts.glob("*.parquet"))
    pq.write_table(pq.read_table(part).replace_schema_metadata({}), part)
    with pytest.raises(NormbenchError, match=r"not a normbench result \(no schema_version\)$"):
        store.read()


def test_missing_run_id_names_the_runs_there(tmp_path, store):
    with pytest.raises(NormbenchError) as info:
        RunStore.open(tmp_path, "run-zzz")
    assert str(info.value) == f"no run 'run-zzz' in {tmp_path}/ (latest runs: run-a)"
    with pytest.raises(NormbenchError, match=r"no runs in .*empty/ yet"):
        RunStore.open(tmp_path / "empty", "latest")


@pytest.mark.parametrize(
    "garbage", [b"not parquet at all", b"PAR1\x00\x00\x00\x00PAR1"], ids=["text", "bad-footer"]
)
def test_unreadable_part_is_one_line(store, garbage):
    store.write_case(make_case(), ok_rows(), "ok", None)
    part = next(store.parts.glob("*.parquet"))
    part.write_bytes(garbage)
    with pytest.raises(NormbenchError) as info:
        store.read()
    message = str(info.value)
    assert message.startswith(f"{part}: unreadable result part (") and "\n" not in message


def test_unreadable_manifest_is_one_clear_error(store):
    (store.path / "manifest.json").write_text("{ not json")
    with pytest.raises(NormbenchError, match=r"manifest\.json: unreadable manifest: "):
        RunStore.open(store.path.parent, "run-a")


def _corrupt_part(store):
    store.write_case(make_case(), ok_rows(), "ok", None)
    next(store.parts.glob("*.parquet")).write_bytes(b"PAR1\x00\x00\x00\x00PAR1")


@pytest.mark.parametrize(
    ("spoil", "expected"),
    [
        (_newer_manifest, "written with result schema version"),
        (_newer_part, "written with result schema version"),
        (_corrupt_part, "unreadable result part"),
        (lambda store: None, "no run 'missing-run'"),
    ],
    ids=["newer-manifest", "newer-part", "corrupt-part", "missing-run"],
)
def test_cli_report_refuses_with_one_line_and_exit_2(cli, store, spoil, expected):
    spoil(store)
    run_id = "missing-run" if expected.startswith("no run") else "run-a"
    result = cli("report", run_id, "--results", store.path.parent)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: ") and expected in lines[0]
    assert lines[1] == "(set NORMBENCH_DEBUG=1 for the traceback)"
    assert result.stdout == ""
