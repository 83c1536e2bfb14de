"""A run stored when the encoder-decoder was the stability bench's `model = "encdec"` upgrades to the table a run of the encdec bench kind writes (same ids, labels, columns, parameters and values), and its old suite text still resumes."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from normbench.core.tolerance import training_tolerance
from normbench.results.schema import SCHEMA_VERSION
from normbench.results.store import RunStore
from normbench.suite.expand import expand
from normbench.suite.load import parse_suite

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "upgrade"
OLD = FIXTURES / "v3-encdec"  # written by the code before the move (fixtures/upgrade/README.md)
RUN_ID = next(OLD.iterdir()).name
OLD_SUITE = (FIXTURES / "encdec.toml").read_text()
# the same suite as it is written today: its encoder-decoder table of kind = "encdec", without `model`
NEW_SUITE = OLD_SUITE.replace(
    'kind = "stability"\nnorms = ["layernorm"]\n[bench.sweep]',
    'kind = "encdec"\nnorms = ["layernorm"]\n[bench.sweep]',
    1,
).replace('model = "encdec"\n', "")
CLOCK = ("train_wall_s", "case_wall_s", "loadavg_1m", "case_started_unix", "case_finished_unix")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(the upgraded copy of the old run, a fresh run of the same suite today): their stores."""
    from typer.testing import CliRunner

    from normbench.cli import app

    root = tmp_path_factory.mktemp("encdec")
    shutil.copytree(OLD, root / "old")
    cli = CliRunner()
    up = cli.invoke(app, ["upgrade", str(root / "old" / RUN_ID)])
    assert up.exit_code == 0, up.output
    assert up.output.strip().endswith(
        f"upgraded from result schema version 3 to {SCHEMA_VERSION} (3 part(s) rewritten); "
        "wrote its rows as one file (_table.parquet)"
    )
    (root / "new.toml").write_text(NEW_SUITE)
    fresh = cli.invoke(
        app, ["run", str(root / "new.toml"), "--quiet", "--threads", "1", "--results", str(root / "new")]
    )
    assert fresh.exit_code == 0, fresh.output
    new_id = fresh.stdout.strip().splitlines()[-1]
    return RunStore.open(root / "old", RUN_ID), RunStore.open(root / "new", new_id)


def test_the_old_and_the_new_spelling_expand_to_the_stored_ids():
    old = [(c.kind, c.case_id, c.label) for c in expand(parse_suite(OLD_SUITE))]
    new = [(c.kind, c.case_id, c.label) for c in expand(parse_suite(NEW_SUITE))]
    stored = json.loads((OLD / RUN_ID / "manifest.json").read_text())["cases"]
    assert old == new and [k for k, _, _ in new] == ["encdec", "encdec", "stability"]
    assert [cid for _, cid, _ in new] == [c["case_id"] for c in stored]


def test_the_upgraded_run_is_the_table_a_run_of_the_encdec_kind_writes(runs):
    old, new = runs
    assert old.manifest["columns"] == new.manifest["columns"]
    assert "model" not in old.manifest["columns"]
    assert [c["label"] for c in old.manifest["cases"]] == [c["label"] for c in new.manifest["cases"]]
    a, b = old.read(), new.read()
    assert list(a.columns) == list(b.columns) and list(a.dtypes) == list(b.dtypes)
    cases = [f.drop_duplicates("case_id").set_index("case_id").sort_index() for f in (a, b)]
    assert dict(zip(cases[0].index, cases[0]["bench"], strict=True)) == dict(
        zip(cases[1].index, cases[1]["bench"], strict=True)
    )
    assert cases[0]["params"].equals(cases[1]["params"]) and cases[0]["status"].equals(cases[1]["status"])
    params = [c for c in new.manifest["columns"] if c not in ("run_id", "value", "sample", "step", "session")]
    params = [c for c in params if c not in ("metric", "unit", "error", "node", "ray_node", "layer", "site")]
    assert cases[0][params[1:]].astype(str).equals(cases[1][params[1:]].astype(str))


def test_the_values_are_the_stored_ones(runs):
    """Equal on the machine that wrote the fixture; another CPU may round differently (the project's
    cross-machine training tolerance)."""
    old, new = runs
    key = ["case_id", "metric", "step", "layer", "site"]
    a, b = (s.read() for s in (old, new))
    a, b = (
        f[~f["metric"].isin(CLOCK)].sort_values(key, kind="stable").reset_index(drop=True) for f in (a, b)
    )
    assert a[key].astype(str).equals(b[key].astype(str))
    tol = training_tolerance(6)
    bad = [
        (k, x, y)
        for k, x, y in zip(a[key].values.tolist(), a["value"], b["value"], strict=True)
        if not (math.isnan(x) and math.isnan(y)) and not tol.close(x, y)
    ]
    assert not bad, bad[:5]


def test_the_upgraded_run_reports_and_resumes_from_its_old_suite_text(runs, cli):
    old, _ = runs
    part = old.parts / f"{old.manifest['cases'][0]['case_id']}.parquet"
    part.unlink()  # as if the run had stopped before this case was stored
    again = cli("run", "--resume", RUN_ID, "--quiet", "--results", old.path.parent)
    assert again.exit_code == 0, again.output
    assert part.exists()
    report = cli("report", RUN_ID, "--results", old.path.parent, "--full")
    assert report.exit_code == 0, report.output
    assert "Encoder–decoder: loss, accuracy, and the update and norm inputs by side" in report.stdout
