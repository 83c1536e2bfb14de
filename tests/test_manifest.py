"""The run manifest goes through one dataclass: a run's manifest.json round-trips, old manifests still read."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from normbench.core.errors import NormbenchError
from normbench.results.manifest import MANIFEST_TYPES, Manifest, read_manifest


def test_the_dataclass_and_the_checked_keys_are_the_same_keys():
    assert {f.name for f in fields(Manifest)} - {"extra"} == set(MANIFEST_TYPES)


def test_a_runs_manifest_round_trips_exactly(tiny_run):
    results, run_id = tiny_run
    path = results / run_id / "manifest.json"
    written = json.loads(path.read_text())
    m = Manifest.read(path)
    assert m.run_id == run_id and m.suite == "tiny" and m.shard is None and m.extra == {}
    assert len(m.cases) == 12 and m.status == "complete" and m.sessions[0]["cases"] == 12
    assert m.columns["d"] == "int64"
    assert m.to_dict() == written and list(m.to_dict()) == list(written)


def test_an_old_manifest_reads_and_keeps_what_this_version_does_not_know(tmp_path):
    run = tmp_path / "old-run"
    run.mkdir()
    old = {"schema_version": 1, "run_id": "old-run", "suite": "s", "started": "2026-11-01T00:00:00+00:00"}
    (run / "manifest.json").write_text(json.dumps({**old, "legacy_note": [1, 2]}))
    m = Manifest.read(run / "manifest.json")
    assert m.columns is None and m.cases is None  # a version-1 run: `normbench upgrade` declares them
    assert m.extra == {"legacy_note": [1, 2]}
    assert m.to_dict() == {**old, "legacy_note": [1, 2]}


def test_a_damaged_manifest_is_one_line_naming_the_key(tmp_path):
    run = tmp_path / "r"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({"schema_version": 2, "run_id": "r", "cases": "all"}))
    with pytest.raises(NormbenchError, match=r"damaged manifest: 'cases' must be a list, found str$"):
        read_manifest(run / "manifest.json")
