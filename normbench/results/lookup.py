"""A run by reference: open one named by id, `latest[:SUITE]` or folder path; every run described as data
(what `list runs --format json` prints)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from normbench.core.errors import NormbenchError
from normbench.results.files import live_writer
from normbench.results.naming import is_run_path, list_run_ids
from normbench.results.store import RunStore


def open_run(ref: str | os.PathLike, results: Path):
    """The RunStore that `ref` names: a run id or `latest[:SUITE]` under `results`, or a run folder's path."""
    if is_run_path(ref):
        folder = Path(ref).resolve()
        return RunStore.open(folder.parent, folder.name)
    return RunStore.open(results, str(ref))


def run_summaries(results: Path) -> list[dict[str, Any]]:
    """One object per run, oldest first: what `list runs` prints, as data. A damaged run has status
    'damaged' and the reason in `error`; a running one whose writer is gone is 'interrupted'."""
    rows = []
    for run_id in list_run_ids(results):
        try:
            store = RunStore.open(results, run_id)
        except NormbenchError as exc:
            rows.append({"run_id": run_id, "status": "damaged", "error": str(exc)})
            continue
        m = store.manifest
        status = m.get("status", "unknown")
        if status == "running" and live_writer(store.path) is None:
            status = "interrupted"
        env = m.get("env") or {}
        rows.append(
            {
                "run_id": run_id,
                "suite": m.get("suite"),
                "tag": m.get("tag"),
                "status": status,
                "started": m.get("started"),
                "cases_done": len(store.finished_case_ids()),
                "cases_planned": len(m.get("cases") or []),
                "shard": m.get("shard"),
                "path": str(store.path),
                "hostname": env.get("hostname"),
                "cpu": env.get("cpu"),
                "torch": env.get("torch"),
            }
        )
    return rows
