"""Baselines per machine: a stored run kept as the reference of one suite on one machine, so that a new run
can be compared with it without both living in one results folder (asv keeps results/<machine>/,
pytest-benchmark .benchmarks/<platform>/). A plain folder that git or a CI cache can hold:

    baselines/<machine fingerprint>/<suite>/<run_id>/manifest.json, parts/*.parquet

The fingerprint names what decides whether timings compare: the CPU model, its core count, the CPU flags
that decide speed (when the run's manifest has them) and the torch version; never the hostname, which a CI
runner changes every job. It is computed from the run's own manifest (the machine that recorded it).
Saving replaces the suite's previous baseline on that machine; a reader sees the old one or the new one."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from normbench.core.errors import NormbenchError, printable
from normbench.results.files import fsync_dir
from normbench.results.naming import list_run_ids
from normbench.results.store import RunStore

BASELINES_DIR = Path(os.environ.get("NORMBENCH_BASELINES", "baselines"))
FINGERPRINT_FIELDS = ("cpu", "cpu_count", "cpu_flags", "torch")


def _slug(text: str, limit: int = 40) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", str(text)).strip("-.")[:limit].strip("-.").lower() or "unknown"


def fingerprint_fields(env: dict) -> dict:
    fields = {k: env.get(k) for k in FINGERPRINT_FIELDS}
    flags = fields["cpu_flags"]  # a list, or one string: the same flags give the same fingerprint
    if flags is not None:
        fields["cpu_flags"] = sorted(flags.replace(",", " ").split() if isinstance(flags, str) else flags)
    return fields


def machine_fingerprint(env: dict) -> str:
    """A folder name a person can read (cpu, cores, torch) and a hash of every field, hostname excluded."""
    fields = fingerprint_fields(env)
    digest = hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()[:10]
    return f"{_slug(fields['cpu'], 24)}-{fields['cpu_count']}c-torch{_slug(fields['torch'], 20)}-{digest}"


def suite_folder(name: str | None) -> str:
    return _slug(name or "suite")


@dataclass
class Baseline:
    fingerprint: str
    suite: str
    store: RunStore

    @property
    def run_id(self) -> str:
        return self.store.run_id

    def describe(self) -> dict:
        env = self.store.manifest.get("env", {})
        return {
            "fingerprint": self.fingerprint,
            "suite": self.suite,
            "run_id": self.run_id,
            "started": self.store.manifest.get("started"),
            **fingerprint_fields(env),
            "path": str(self.store.path),
        }


def save(store: RunStore, baselines_dir: Path) -> Baseline:
    """Copy a finished run into baselines/<fingerprint>/<suite>/, replacing that suite's baseline there.
    Every part is read first (a damaged run is refused before anything is written)."""
    store.read_table()  # refuses an unreadable or foreign part with its name
    fp = machine_fingerprint(store.manifest.get("env", {}))
    suite = suite_folder(store.manifest.get("suite"))
    target = Path(baselines_dir) / fp / suite
    staging = old = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.parent / f".{suite}.{os.getpid()}.{os.urandom(3).hex()}.tmp"
        shutil.copytree(
            store.path, staging / store.run_id, ignore=shutil.ignore_patterns(".lock", "rejected")
        )
        if target.exists():
            old = target.parent / f".{suite}.{os.urandom(3).hex()}.old"
            os.replace(target, old)
        os.replace(staging, target)
        fsync_dir(target.parent)
    except OSError as exc:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        raise NormbenchError(f"cannot save the baseline under {target}: {exc.strerror or exc}") from None
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return Baseline(fp, suite, RunStore.open(target, store.run_id))


def find(baselines_dir: Path, env: dict, suite: str | None, *, any_machine: bool = False) -> Baseline:
    """This machine's baseline of `suite` (env: the new run's manifest env), or with `any_machine` and none
    here the newest one of that suite saved on another machine (its timings are then not comparable; its
    deterministic values are). Else a one-line error that names the fingerprint looked for and what is there."""
    fp = machine_fingerprint(env)
    folder = Path(baselines_dir) / fp / suite_folder(suite)
    runs = list_run_ids(folder) if folder.is_dir() else []
    if runs:
        baseline = Baseline(fp, suite_folder(suite), RunStore.open(folder, runs[-1]))
    else:
        known = list_baselines(baselines_dir)
        same_suite = [b for b in known if b.suite == suite_folder(suite)]
        if not (any_machine and same_suite):
            names = ", ".join(f"{b.fingerprint}/{b.suite}" for b in known) or "none"
            raise NormbenchError(
                printable(
                    f"no baseline of suite {suite!r} for machine {fp} in {baselines_dir}/ (baselines there: "
                    f"{names}); `normbench baseline save RUN` makes one"
                )
            )
        baseline = max(same_suite, key=lambda b: str(b.store.manifest.get("started", "")))
    stored_suite = baseline.store.manifest.get("suite")
    if suite_folder(stored_suite) != suite_folder(suite):
        raise NormbenchError(
            printable(f"{baseline.store.path}: a baseline of suite {stored_suite!r}, not {suite!r}")
        )
    return baseline


def list_baselines(baselines_dir: Path) -> list[Baseline]:
    out = []
    root = Path(baselines_dir)
    if not root.is_dir():
        return out
    for machine in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for suite in sorted(p for p in machine.iterdir() if p.is_dir() and not p.name.startswith(".")):
            runs = list_run_ids(suite)
            if runs:
                out.append(Baseline(machine.name, suite.name, RunStore.open(suite, runs[-1])))
    return out
