"""Every bad-input attempt of the corpus (corpus.py, corpus_stored_runs.py, corpus_names_and_numbers.py) ends with its one-line message, its exit code, no
traceback, and the stated files on disk."""

from __future__ import annotations

import shutil

import pytest
from corpus import ATTEMPTS, Attempt
from corpus_names_and_numbers import NAMES_AND_NUMBERS
from corpus_stored_runs import STORED_RUNS

from normbench.results.store import RunStore


@pytest.fixture(scope="module")
def stored_run(tiny_run, tmp_path_factory):
    """The shared tiny run (12 ok cases) renamed RUN, to copy into each attempt's folder."""
    results, run_id = tiny_run
    root = tmp_path_factory.mktemp("corpus_run")
    store = RunStore.open(results, run_id)
    shutil.copytree(store.path, root / "RUN")
    manifest = (root / "RUN" / "manifest.json").read_text().replace(run_id, "RUN")
    (root / "RUN" / "manifest.json").write_text(manifest)
    for part in (root / "RUN" / "parts").glob("*.parquet"):
        _rename_run(part, "RUN")
    return root / "RUN"


def _rename_run(part, run_id):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(part)
    column = table.column_names.index("run_id")
    table = table.set_column(column, "run_id", pa.array([run_id] * table.num_rows))
    pq.write_table(table.replace_schema_metadata({**table.schema.metadata, b"run_id": run_id.encode()}), part)


@pytest.mark.parametrize(
    "attempt",
    ATTEMPTS + STORED_RUNS + NAMES_AND_NUMBERS,
    ids=[a.id for a in ATTEMPTS + STORED_RUNS + NAMES_AND_NUMBERS],
)
def test_attempt(attempt: Attempt, tmp_path, monkeypatch, cli, stored_run):
    for name, content in attempt.files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    run = tmp_path / "results" / "RUN"
    if attempt.needs_run or attempt.prepare is not None:
        if attempt.needs_run:
            shutil.copytree(stored_run, run)
        if attempt.prepare is not None:
            attempt.prepare(tmp_path, run)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NORMBENCH_DEBUG", raising=False)
    args = [*attempt.args]
    if args[0] in ("run", "report", "plot", "compare") or args[:2] == ["list", "runs"]:
        if "--results" not in args:
            args += ["--results", "results"]
    result = cli(*args)
    output = result.stdout + result.stderr
    assert result.exit_code == attempt.code, output
    assert " ".join(attempt.says.split()) in " ".join(output.split()), output  # wrapped at the width
    assert "Traceback" not in output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "\x1b" not in output  # control characters are escaped
    if attempt.disk is not None:
        assert attempt.disk(tmp_path) is not False
