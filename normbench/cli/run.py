"""Run a suite and store its results under results/<run_id>/. Exit 0 when every case is ok, 1 when
some failed, 2 for a bad suite or option, 130 when interrupted (finish with --resume RUN_ID)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from normbench.cli._common import RESULTS_DIR, cli_errors, err, out, parse_shard
from normbench.core.errors import NormbenchError, printable

NAME = "run"
PANEL = "Run"


@cli_errors
def command(
    suite: Annotated[
        str | None,
        typer.Argument(
            help="Suite TOML file, or the name of a shipped suite (quick, paper, ...); not needed with --resume.",
            show_default=False,
        ),
    ] = None,
    results: Annotated[Path, typer.Option("--results", "-r", help="Results directory.")] = RESULTS_DIR,
    resume: Annotated[
        str | None,
        typer.Option(help="Finish RUN_ID (or 'latest'): run only its cases without a stored result."),
    ] = None,
    shard: Annotated[
        str | None, typer.Option(help="i/N: run the i-th of N deterministic slices (SLURM arrays, ...).")
    ] = None,
    only: Annotated[
        list[str] | None,
        typer.Option(help="Run only cases whose label contains PATTERN (globs allowed); repeatable."),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the expanded cases and stop.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output (for CI).")] = False,
    threads: Annotated[
        int | None,
        typer.Option(
            help="torch CPU threads (default: the suite's `threads`, else torch's choice).", min=1, max=1024
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(help="local: one case after another here; ray: cases spread over a Ray cluster."),
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(help="With --executor ray: join this cluster (auto, ray://host:port); else start one."),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            help="With --executor ray: CPUs of the local Ray (default: all cores), or tasks in flight on a cluster.",
            min=1,
        ),
    ] = None,
) -> None:
    from normbench.executors import EXECUTORS, Executor
    from normbench.results.paths import check_results_dir
    from normbench.suite.expand import expand, select
    from normbench.suite.load import load_suite, parse_suite

    if executor not in EXECUTORS:
        raise NormbenchError(f"--executor {executor!r}: expected one of {', '.join(EXECUTORS)}")
    if executor != "ray" and (address or jobs):
        raise NormbenchError("--address and --jobs go with --executor ray")
    if executor == "ray":
        from normbench.executors.ray import import_ray

        import_ray()  # fail now, before a run folder exists, when Ray is not installed
    check_results_dir(results, create=False)
    store = None
    if resume:
        from normbench.results.store import RunStore

        store = RunStore.open(results, resume)
        m = _resumable(store)
        if suite is not None and Path(suite).resolve() != Path(m["suite_source"]).resolve():
            _say(f"note: --resume uses the suite text stored in the run, not {suite}")
        suite_obj = parse_suite(m["suite_text"], m["suite_source"], m.get("suite_includes") or {})
        if shard is not None or only:
            raise NormbenchError("--resume keeps the run's own --shard/--only; do not give them again")
        shard_t = tuple(m["shard"]) if m.get("shard") else None
        only = m.get("only") or None
    else:
        if suite is None:
            raise NormbenchError(
                "give a suite file, e.g. `normbench run suites/quick.toml`, or --resume RUN_ID"
            )
        from normbench.suite.catalog import resolve

        suite_obj = load_suite(resolve(suite))
        shard_t = parse_shard(shard)
    planned = expand(suite_obj)
    cases = select(planned, only, shard_t)
    if not cases:
        raise NormbenchError("no case matches the --only/--shard selection")
    if dry_run:
        _print_cases(cases)
        return

    import torch

    from normbench.results.env import fingerprint
    from normbench.results.files import RunLock, check_writable, remove_stale_temporaries
    from normbench.results.schema import declare_columns
    from normbench.results.store import RunStore, new_run_id

    threads = threads or (_stored_threads(store) if store else suite_obj.threads)
    if threads:
        torch.set_num_threads(threads)
    env = fingerprint()
    now = datetime.now(UTC).isoformat(timespec="seconds")
    if store is None:
        check_results_dir(results, create=True)
        store = RunStore.create(
            results,
            {
                "run_id": new_run_id(suite_obj.name, shard_t),
                "suite": suite_obj.name,
                "suite_source": str(suite_obj.source),
                "suite_sha256": suite_obj.sha256,
                "suite_text": suite_obj.text,
                "suite_includes": suite_obj.includes,
                "claims": suite_obj.claims,
                "shard": list(shard_t) if shard_t else None,
                "only": only or None,
                "started": now,
                "env": env,
                "cases": [{"case_id": c.case_id, "label": c.label} for c in cases],
                "sessions": [],
                # one schema for every part, from the whole suite (every shard of it declares the same)
                "columns": declare_columns([c.kind for c in planned], [c.params for c in planned]),
            },
        )
    # One writer per run folder; under the lock the manifest is read again (another writer may have
    # finished in between) and every part is verified before it counts as done.
    with RunLock(store.path, store.run_id, say=_say):
        store = RunStore.open(results, store.run_id)
        remove_stale_temporaries(store.path)
        check_writable(store.parts)
        if resume:
            _warn_if_environment_changed(store.manifest["env"], env)
        outcome, remaining = _run_session(
            store, cases, store.verify_parts(_say), now, quiet, torch, Executor(executor, address, jobs)
        )
    _finish(store, outcome, remaining, results)


def _say(text: str) -> None:
    err.print(printable(text), markup=False)


def _stored_threads(store) -> int | None:
    """The first session's thread count, through the suite's validator (torch segfaults on 10**8)."""
    from normbench.suite.load import THREADS

    sessions = store.manifest.get("sessions") or [{}]
    value, problem = THREADS.coerce(sessions[0].get("threads") or 1)
    if problem:
        raise NormbenchError(
            f"{store.path / 'manifest.json'}: damaged manifest: sessions[0].threads: {problem}"
        )
    return value if sessions[0].get("threads") else None


def _resumable(store) -> dict:
    from normbench.results.verify import RESUME_KEYS, manifest_problem

    problem = manifest_problem(store.manifest, store.path.name, required=("run_id", *RESUME_KEYS))
    if problem:
        raise NormbenchError(f"{store.path / 'manifest.json'}: cannot resume: {problem}")
    return store.manifest


def _run_session(store, cases, done: set[str], now: str, quiet: bool, torch, executor):
    """Run the cases not yet done as one session recorded in the manifest: (outcome, cases left)."""
    from normbench.benches import RunContext
    from normbench.cli._progress import RunProgress
    from normbench.runner import RunOutcome

    todo = [c for c in cases if c.case_id not in done]
    session = len(store.manifest.get("sessions", []))
    if not quiet:
        env = store.manifest.get("env", {})
        _say(
            f"run {store.run_id}: {len(todo)} of {len(cases)} cases to run "
            f"({torch.get_num_threads()} threads, {env.get('gpu') or env.get('cpu')})"
        )
    ctx = RunContext(threads=torch.get_num_threads())
    sessions = store.manifest.get("sessions", [])
    sessions.append(
        {
            "started": now,
            "pid": os.getpid(),
            "threads": ctx.threads,
            "cases": len(todo),
            "executor": executor.name,
        }
    )
    _write_manifest(store, sessions=sessions, status="running")
    try:
        with RunProgress(len(todo), quiet=quiet) as progress:
            outcome = executor.run(store, todo, ctx, session=session, progress=progress, say=_say)
    except KeyboardInterrupt:  # a second Ctrl-C: the case in flight is lost, every finished one is kept
        outcome = RunOutcome(interrupted=True)
    sessions[-1]["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    remaining = len({c.case_id for c in cases} - store.finished_case_ids())
    status = "complete" if remaining == 0 else "interrupted"
    try:
        store.update_manifest(sessions=sessions, status=status)
    except OSError as exc:  # the parts are the record; `list runs` shows a run with no writer as interrupted
        outcome.write_error = outcome.write_error or exc
    return outcome, remaining


def _write_manifest(store, **fields) -> None:
    try:
        store.update_manifest(**fields)
    except OSError as exc:
        raise NormbenchError(f"cannot write {store.path / 'manifest.json'}: {exc.strerror or exc}") from None


def _finish(store, outcome, remaining: int, results: Path) -> None:
    counts = ", ".join(f"{n} {s}" for s, n in sorted(outcome.statuses.items()))
    _say(f"run {store.run_id}: {counts or 'nothing run'}; stored in {store.path}")
    for label, reason in outcome.failures:
        _say(f"  failed: {label}: {reason}")
    resume = f"`normbench run --resume {store.run_id}" + (
        f" --results {results}`" if Path(results) != RESULTS_DIR else "`"
    )
    if outcome.write_error is not None:
        exc = outcome.write_error
        stored = len(store.finished_case_ids())
        _say(
            f"error: cannot write {exc.filename or store.parts}: {exc.strerror or exc}; "
            f"{stored} cases stored; {resume} finishes"
        )
    elif remaining:
        _say(f"{remaining} cases left: {resume} finishes them")
    raise typer.Exit(outcome.exit_code)


def _print_cases(cases) -> None:
    for c in cases:
        out.print(printable(f"{c.case_id}  {c.label}"), markup=False)
    out.print(f"{len(cases)} cases", markup=False)


def _warn_if_environment_changed(old: dict, new: dict) -> None:
    keys = ["hostname", "cpu", "gpu", "torch", "torch_threads", "cuda"]
    changed = [f"{k}: {old.get(k)} -> {new.get(k)}" for k in keys if old.get(k) != new.get(k)]
    if changed:
        _say("warning: resuming in a different environment; rows will mix them (" + "; ".join(changed) + ")")
