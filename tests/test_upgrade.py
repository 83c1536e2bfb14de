"""`normbench upgrade` turns a version-1 or version-2 run into the table a version-3 run of the same suite wrote (same ids, renamed columns, the stored values unchanged), once, atomically, and the store refuses a run it has not upgraded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from normbench.cli import app
from normbench.core.case import case_id
from normbench.core.errors import NormbenchError
from normbench.results import upgrade as upgrading
from normbench.results.schema import COLUMN_RENAMES, SCHEMA_VERSION
from normbench.results.store import RunStore
from normbench.suite.load import parse_suite

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "upgrade"
RUN_ID = next((FIXTURES / "v2").iterdir()).name
SUITE = (FIXTURES / "mixed.toml").read_text()


def old_run(tmp_path: Path, version: int) -> Path:
    """A copy of the stored version-1 or version-2 run (the copy is upgraded, never the fixture)."""
    results = tmp_path / f"v{version}"
    shutil.copytree(FIXTURES / f"v{version}", results)
    return results / RUN_ID


def upgrade(*args: str):
    return CliRunner().invoke(app, ["upgrade", *args])


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """The same suite as a version-3 run wrote it (fixtures/upgrade/v3, written by the version-3 code of
    commit 1f6027c), upgraded to today's version (nothing but its schema version changes: it has no
    encoder-decoder rows): (frame, manifest). A stored run, not a fresh one: the latency bench's protocol has
    moved since (paired rounds), which is no business of an upgrade of the schema."""
    results = tmp_path_factory.mktemp("v3")
    shutil.copytree(FIXTURES / "v3", results, dirs_exist_ok=True)
    run_id = next(results.iterdir()).name
    assert upgrade(str(results / run_id)).exit_code == 0
    store = RunStore.open(results, run_id)
    return store.read(), store.manifest


# Metrics the latency bench has recorded since the fixtures were written (huge pages and machine speed per
# case): an upgrade cannot invent a measurement, so the upgraded run lacks them.
ADDED_SINCE_FIXTURE = {
    "huge_page_share",
    "process_huge_page_share",
    "huge_pages_low",
    "canary_time",
    "machine_slowdown",
}
COLUMNS_SINCE_FIXTURE = {"pages"}  # the page state those rows are labelled with
# The latency bench's columns since the version-3 fixture (paired rounds: the copy probe is always in a case's
# rounds, so no copy_from; a reference, a pairing and the round set; the process of a
# per-process row): an upgrade declares today's
CHANGED_SINCE_V3 = {"copy_from", "reference", "pairing", "round_set", "process"}
# The stability bench's parameters since the fixtures (padded batching, a token budget; the encoder-decoder): a version-1 run
# declares no columns, so its upgrade declares those its suite declares today, empty in its rows; a
# version-2 run keeps the columns it declared.
PARAMS_SINCE_FIXTURE = {"batching", "segment", "max_tokens"}


@pytest.mark.parametrize("version", [1, 2])
def test_an_upgraded_run_is_the_table_a_fresh_run_writes(tmp_path, fresh, version):
    frame_new, manifest_new = fresh
    run = old_run(tmp_path, version)
    before = {p.stem: pq.read_table(p).to_pylist() for p in (run / "parts").glob("*.parquet")}
    result = upgrade(str(run))
    assert result.exit_code == 0, result.output
    assert result.output.strip() == (
        f"{run}: upgraded from result schema version {version} to {SCHEMA_VERSION} (9 part(s) rewritten); "
        "wrote its rows as one file (_table.parquet)"
    )
    store = RunStore.open(run.parent, RUN_ID)
    frame = store.read()
    since = PARAMS_SINCE_FIXTURE if version == 1 else set()
    assert since <= set(store.manifest["columns"]) and frame.reindex(columns=sorted(since)).isna().all().all()
    # the label columns this version declares and the fixture's did not stay out (nothing to put in them)
    assert {
        **{c: t for c, t in store.manifest["columns"].items() if c not in CHANGED_SINCE_V3 | since},
        **{c: t for c, t in manifest_new["columns"].items() if c in COLUMNS_SINCE_FIXTURE},
    } == {c: t for c, t in manifest_new["columns"].items() if c not in CHANGED_SINCE_V3}
    ours_cols, theirs_cols = (
        f.drop(columns=[c for c in COLUMNS_SINCE_FIXTURE | CHANGED_SINCE_V3 | since if c in f])
        for f in (frame, frame_new)
    )
    assert list(ours_cols.columns) == list(theirs_cols.columns)
    assert list(ours_cols.dtypes) == list(theirs_cols.dtypes)
    assert "hidden" not in frame and {"d", "warmup_calls", "warmup"} <= set(frame.columns)
    assert set(frame["case_id"]) == set(frame_new["case_id"])
    labels = {c["case_id"]: c["label"] for c in manifest_new["cases"]}
    assert {c["case_id"]: c["label"] for c in store.manifest["cases"]} == labels
    assert any(" d=16 " in label for label in labels.values())
    # every case's parameters: the params JSON and the parameter columns, as the fresh run stores them
    params = [c for c in frame.columns if c not in ("run_id", "value", "sample", "step", "session", "node")]
    params = [c for c in params if c not in ("case_id", "metric", "unit", "status", "error", "ray_node")]
    params = [c for c in params if c not in CHANGED_SINCE_V3 | since]
    ours = frame.drop_duplicates("case_id").set_index("case_id")[params].sort_index()
    theirs = frame_new.drop_duplicates("case_id").set_index("case_id")[params].sort_index()
    assert ours.astype(str).equals(theirs.astype(str))
    # the values are those stored before, row by row, the renamed columns holding the old ones
    for cid, rows in before.items():
        got = frame[frame["case_id"] == cid].to_dict("records")
        assert [(r["metric"], r["value"], r.get("sample")) for r in rows] == [
            (g["metric"], None if g["value"] != g["value"] else g["value"], _none(g["sample"])) for g in got
        ]
        kind = rows[0]["bench"]
        for old, new in COLUMN_RENAMES[3].get(kind, {}).items():
            assert [_none(g[new]) for g in got] == [r.get(old) for r in rows]
    # the same rows: one per (case, metric, sample, step), whatever the numbers measured anew, apart from
    # the metrics this version measures and the fixture's did not (an upgrade never invents rows)
    added = set(frame_new["metric"]) - set(frame["metric"])
    assert added <= ADDED_SINCE_FIXTURE
    new_rows = frame_new[~frame_new["metric"].isin(added)]
    key = ["case_id", "metric", "sample", "step"]
    assert sorted(map(str, frame[key].values.tolist())) == sorted(map(str, new_rows[key].values.tolist()))


def _none(v):
    import pandas as pd

    return None if v is None or v is pd.NA or (isinstance(v, float) and v != v) else v


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize(
    "command", [["report"], ["export", "-o", "x.csv"], ["compare", "RUN", "RUN"], ["run", "--resume", "RUN"]]
)
def test_an_old_run_is_refused_with_the_command_that_upgrades_it(tmp_path, monkeypatch, version, command):
    run = old_run(tmp_path, version)
    monkeypatch.chdir(tmp_path)
    args = [RUN_ID if a == "RUN" else a for a in command]
    args += [] if "RUN" in command else [RUN_ID]
    result = CliRunner().invoke(app, [*args, "--results", str(run.parent)])
    assert result.exit_code == 2
    assert result.output.splitlines()[0] == (
        f"error: {run}/manifest.json: written with result schema version {version}; this normbench reads "
        f"version {SCHEMA_VERSION}: run `normbench upgrade {run}` (rewrites the run in place)"
    )
    assert "Traceback" not in result.output


def test_upgrade_twice_changes_nothing_the_second_time(tmp_path):
    run = old_run(tmp_path, 2)
    assert upgrade(str(run)).exit_code == 0
    files = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    again = upgrade(str(run))
    assert (
        again.exit_code == 0
        and again.output.strip() == f"{run}: already at result schema version {SCHEMA_VERSION}"
    )
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == files


def test_a_dry_run_writes_nothing(tmp_path):
    run = old_run(tmp_path, 1)
    files = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    result = upgrade("--dry-run", RUN_ID, "--results", str(run.parent))
    assert (
        result.exit_code == 0
        and f"would upgrade from result schema version 1 to {SCHEMA_VERSION}" in result.output
    )
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == files


def test_an_interrupted_upgrade_is_refused_then_finished(tmp_path, monkeypatch):
    run = old_run(tmp_path, 2)
    done = old_run(tmp_path / "whole", 2)
    assert upgrade(str(done)).exit_code == 0
    real, written = upgrading.atomic_write, []

    def dies_after_three_parts(path, write):
        if len(written) == 3:
            raise OSError(28, "No space left on device")  # a full disk mid-way: three parts new, six old
        written.append(path)
        real(path, write)

    monkeypatch.setattr(upgrading, "atomic_write", dies_after_three_parts)
    with pytest.raises(OSError):
        upgrading.upgrade_run(RunStore.open(run.parent, RUN_ID))
    monkeypatch.setattr(upgrading, "atomic_write", real)
    assert json.loads((run / "manifest.json").read_text())["schema_version"] == 2  # the manifest goes last
    with pytest.raises(NormbenchError, match=r"version 2; .* run `normbench upgrade "):
        RunStore.open(run.parent, RUN_ID).read()
    assert (
        upgrade(str(run))
        .output.strip()
        .endswith("(6 part(s) rewritten); wrote its rows as one file (_table.parquet)")
    )
    assert RunStore.open(run.parent, RUN_ID).read().equals(RunStore.open(done.parent, RUN_ID).read())
    assert (run / "manifest.json").read_text() == (done / "manifest.json").read_text()


def test_a_part_left_old_by_hand_is_refused_by_name(tmp_path):
    run = old_run(tmp_path, 2)
    assert upgrade(str(run)).exit_code == 0
    part = sorted((run / "parts").glob("*.parquet"))[0]
    shutil.copy(FIXTURES / "v2" / RUN_ID / "parts" / part.name, part)
    with pytest.raises(NormbenchError, match=rf"^{part}: written with result schema version 2"):
        RunStore.open(run.parent, RUN_ID).read()


def test_old_parameter_names_are_aliases_with_the_same_case_ids():
    new = SUITE.replace("hidden =", "d =").replace(
        "warmup = 0\nmin_sample_s", "warmup_calls = 0\nmin_sample_s"
    )
    assert "hidden" not in new and new.count("warmup_calls") == 2
    old_cases = [c for s in parse_suite(SUITE, "old").benches for c in s.cases]
    new_cases = [c for s in parse_suite(new, "new").benches for c in s.cases]
    assert [(c.case_id, c.params) for c in old_cases] == [(c.case_id, c.params) for c in new_cases]
    stored = {
        c["case_id"] for c in json.loads((FIXTURES / "v2" / RUN_ID / "manifest.json").read_text())["cases"]
    }
    # the ids version 2 minted under the old names; latency cases lost a parameter since (copy_reuse: the
    # copy probe is always in a case's paired rounds now), so theirs are new
    assert {c.case_id for c in new_cases if c.kind != "latency"} <= stored
    assert len(stored - {c.case_id for c in new_cases}) == sum(c.kind == "latency" for c in new_cases)
    latency = next(c for c in new_cases if c.kind == "latency")
    hashed = {k: v for k, v in latency.params.items() if k not in latency.unhashed}  # reference, pairing
    assert latency.case_id == case_id("latency", latency.norm, latency.impl, hashed)


def test_both_spellings_at_once_is_a_problem():
    from normbench.core.errors import SuiteError

    text = SUITE.replace("hidden = [16, 32]", "hidden = [16, 32]\nd = [8]")
    with pytest.raises(SuiteError) as info:
        parse_suite(text, "s")
    assert [p.message for p in info.value.problems] == ["the old name of 'd'; give one"]


def test_the_docs_table_lists_every_rename():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "suites-and-results.md").read_text()
    for kinds in COLUMN_RENAMES.values():
        for kind, names in kinds.items():
            for old, new in names.items():
                assert any(kind in line and f"| `{old}` | `{new}` |" in line for line in doc.splitlines()), (
                    kind,
                    old,
                    new,
                )


def test_a_removed_parameter_is_refused_with_its_reason_and_its_old_value_still_reads():
    from normbench.core.errors import SuiteError

    base = (
        'name = "s"\n[[bench]]\nkind = "latency"\nnorms = ["layernorm"]\n[bench.params]\ntokens = 8\nd = 16\n'
    )
    with pytest.raises(SuiteError) as info:
        parse_suite(base + 'layout = "shift"\n', "s")
    assert [p.where for p in info.value.problems] == ["bench[0].params.layout"]
    assert info.value.problems[0].message.startswith('removed: `layout = "shift"` did not')
    # a suite stored by an older run that gave the value every case now behaves as: the same cases and ids
    before = [c.case_id for s in parse_suite(base + 'layout = "fixed"\n', "s").benches for c in s.cases]
    assert before == [c.case_id for s in parse_suite(base, "s").benches for c in s.cases]
