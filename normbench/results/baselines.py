"""Baselines per machine: a stored run kept as the reference of one suite on one machine, so that a new run
can be compared with it without both living in one results folder (asv keeps results/<machine>/,
pytest-benchmark .benchmarks/<platform>/), in a plain folder that git or a CI cache can hold.

Details: docs/ci.md, "Baselines per machine"."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from normbench.core.errors import NormbenchError, printable
from normbench.core.settings import env_setting
from normbench.results.files import RunLock, check_no_writer, check_own_folders, fsync_dir
from normbench.results.naming import list_run_ids
from normbench.results.paths import check_output_dir, name_problem, slug
from normbench.results.store import RunStore

BASELINES_DIR = Path(env_setting("NORMBENCH_BASELINES") or "baselines")  # empty or blank: unset
FINGERPRINT_FIELDS = ("cpu", "cpu_count", "cpu_flags", "torch")


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
    return f"{slug(fields['cpu'], 24, lower=True)}-{fields['cpu_count']}c-torch{slug(fields['torch'], 20, lower=True)}-{digest}"


def suite_folder(name: str | None) -> str:
    return slug(name or "suite", lower=True)


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


def save(store: RunStore, baselines_dir: Path, say=print) -> Baseline:
    """Copy a finished run into baselines/<fingerprint>/<suite>/, replacing that suite's baseline there.
    Every part is read first (a damaged run is refused before anything is written), the copy is read again
    before it replaces the old baseline, and one save per machine folder runs at a time (its lock)."""
    check_no_writer(store.path, store.run_id, "saving it as a baseline")
    check_own_folders(store.path)
    store.read_table(from_parts=True)  # refuses an unreadable or foreign part with its name
    fp = machine_fingerprint(store.manifest.get("env", {}))
    suite = suite_folder(store.manifest.get("suite"))
    machine = check_output_dir(Path(baselines_dir), "--baselines") / fp
    target = machine / suite
    try:
        machine.mkdir(exist_ok=True)
    except OSError as exc:
        raise NormbenchError(f"cannot save the baseline under {target}: {exc.strerror or exc}") from None
    if machine.is_symlink() or target.is_symlink() or (target.exists() and not target.is_dir()):
        raise NormbenchError(
            printable(
                f"{target}: not a folder of baselines (a link or a file); normbench does not replace it"
            )
        )
    with RunLock(
        machine, store.run_id, say=say, doing="saving another baseline", subject=f"baselines of {fp}"
    ):
        return _swap_in(store, machine, target, fp, suite)


def _swap_in(store: RunStore, machine: Path, target: Path, fp: str, suite: str) -> Baseline:
    staging = machine / f".{suite}.{os.getpid()}.{os.urandom(3).hex()}.tmp"
    old = None
    try:
        shutil.copytree(
            store.path, staging / store.run_id, ignore=shutil.ignore_patterns(".lock", "rejected", ".*.tmp")
        )
        RunStore.open(staging, store.run_id).read_table(from_parts=True)  # the copy reads whole first
        if target.exists():
            old = machine / f".{suite}.{os.urandom(3).hex()}.old"
            os.replace(target, old)
        os.replace(staging, target)
        fsync_dir(machine)
    except (OSError, NormbenchError) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        reason = exc.strerror or exc if isinstance(exc, OSError) else exc
        raise NormbenchError(printable(f"cannot save the baseline under {target}: {reason}")) from None
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
    # folders named by the name rule only: dot-named staging copies, links and strays are not baselines
    for machine in sorted(p for p in root.iterdir() if _is_baseline_folder(p)):
        for suite in sorted(p for p in machine.iterdir() if _is_baseline_folder(p)):
            runs = list_run_ids(suite)
            if runs:
                out.append(Baseline(machine.name, suite.name, RunStore.open(suite, runs[-1])))
    return out


def _is_baseline_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink() and name_problem(path.name) is None
