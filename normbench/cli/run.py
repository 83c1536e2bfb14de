"""Run a suite and store its results under results/<run_id>/. Exit 0 when every case is ok, 1 when
some failed, 2 for a bad suite or option, 130 when interrupted (finish with --resume RUN_ID)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from normbench.cli._common import RESULTS_DIR, cli_errors, err, out, parse_shard
from normbench.errors import NormbenchError

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
        typer.Option(help="torch CPU threads (default: the suite's `threads`, else torch's choice).", min=1),
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
    from normbench.executors import EXECUTORS
    from normbench.suite.expand import expand, select
    from normbench.suite.load import load_suite, parse_suite

    if executor not in EXECUTORS:
        raise NormbenchError(f"--executor {executor!r}: expected one of {', '.join(EXECUTORS)}")
    if executor != "ray" and (address or jobs):
        raise NormbenchError("--address and --jobs go with --executor ray")
    if executor == "ray":
        from normbench.executors.ray import import_ray

        import_ray()  # fail now, before a run folder exists, when Ray is not installed

    store = None
    if resume:
        from normbench.results.store import RunStore

        store = RunStore.open(results, resume)
        m = store.manifest
        if suite is not None and Path(suite).resolve() != Path(m["suite_source"]).resolve():
            err.print(f"note: --resume uses the suite text stored in the run, not {suite}", markup=False)
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

    from normbench.benches import RunContext
    from normbench.results.env import fingerprint
    from normbench.results.schema import declare_columns
    from normbench.results.store import RunStore, new_run_id
    from normbench.runner import run_cases

    threads = threads or (
        store.manifest["sessions"][0].get("threads")
        if store and store.manifest.get("sessions")
        else suite_obj.threads
    )
    if threads:
        torch.set_num_threads(threads)
    env = fingerprint()
    now = datetime.now(UTC).isoformat(timespec="seconds")
    if store is None:
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
    else:
        _warn_if_environment_changed(store.manifest["env"], env)
    done = store.finished_case_ids()
    todo = [c for c in cases if c.case_id not in done]
    session = len(store.manifest.get("sessions", []))
    if not quiet:
        err.print(
            f"run {store.run_id}: {len(todo)} of {len(cases)} cases to run "
            f"({env['torch_threads']} threads, {env.get('gpu') or env['cpu']})",
            markup=False,
        )

    from normbench.cli._progress import RunProgress

    ctx = RunContext(threads=torch.get_num_threads())
    sessions = store.manifest.get("sessions", [])
    sessions.append(
        {"started": now, "pid": os.getpid(), "threads": ctx.threads, "cases": len(todo), "executor": executor}
    )
    store.update_manifest(sessions=sessions, status="running")
    from normbench.runner import RunOutcome

    try:
        say = lambda s: err.print(s, markup=False)  # noqa: E731
        with RunProgress(len(todo), quiet=quiet) as progress:
            if executor == "ray":
                from normbench.executors.ray import run_cases_ray

                outcome = run_cases_ray(
                    store, todo, ctx, session=session, progress=progress, say=say, address=address, jobs=jobs
                )
            else:
                outcome = run_cases(store, todo, ctx, session=session, progress=progress, say=say)
    except KeyboardInterrupt:  # a second Ctrl-C: the case in flight is lost, every finished one is kept
        outcome = RunOutcome(interrupted=True)
    sessions[-1]["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    remaining = len(cases) - len(store.finished_case_ids())
    store.update_manifest(sessions=sessions, status="complete" if remaining == 0 else "interrupted")

    counts = ", ".join(f"{n} {s}" for s, n in sorted(outcome.statuses.items()))
    err.print(f"run {store.run_id}: {counts or 'nothing run'}; stored in {store.path}", markup=False)
    for label, reason in outcome.failures:
        err.print(f"  failed: {label}: {reason}", markup=False)
    if remaining:
        err.print(
            f"{remaining} cases left: `normbench run --resume {store.run_id}` finishes them", markup=False
        )
    raise typer.Exit(outcome.exit_code)


def _print_cases(cases) -> None:
    for c in cases:
        out.print(f"{c.case_id}  {c.label}", markup=False)
    out.print(f"{len(cases)} cases", markup=False)


def _warn_if_environment_changed(old: dict, new: dict) -> None:
    keys = ["hostname", "cpu", "gpu", "torch", "torch_threads", "cuda"]
    changed = [f"{k}: {old.get(k)} -> {new.get(k)}" for k in keys if old.get(k) != new.get(k)]
    if changed:
        err.print(
            "warning: resuming in a different environment; rows will mix them (" + "; ".join(changed) + ")",
            markup=False,
        )
