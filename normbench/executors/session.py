"""What `normbench run` does, below its options: plan the cases (a suite, or the run being resumed), create
or reopen the run's store, and run one session of it with an executor, recorded in the manifest.

The suite is expanded once, while it is validated; the planned cases (every case of the suite: they declare
the run's columns) and the selected ones (--only/--shard) are passed along from here, never expanded again."""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from normbench.benches import RunContext, get_bench
from normbench.core.case import Case
from normbench.core.errors import NormbenchError
from normbench.core.plugins import ALLOW_OVERRIDE_VAR, OVERRIDES
from normbench.executors import EXECUTORS, Executor
from normbench.executors.processes import DEFAULT_PROCESSES, check_processes, env_processes
from normbench.executors.ray import cap_local_jobs, import_ray
from normbench.executors.ray_cluster import bound_ray_waits
from normbench.executors.resume import check_overrides, check_suite_hash, recorded_cases
from normbench.results.env import fingerprint, threads_phrase
from normbench.results.files import check_no_writer
from normbench.results.manifest import RESUME_KEYS, Manifest, manifest_problem
from normbench.results.paths import check_results_dir
from normbench.results.schema import declare_columns
from normbench.results.store import RunStore, new_run_id
from normbench.results.writing import writing
from normbench.runner import RunOutcome
from normbench.suite.catalog import resolve
from normbench.suite.expand import expand, select
from normbench.suite.load import load_suite, parse_suite
from normbench.suite.spec import Suite
from normbench.suite.validate import THREADS
from normbench.timing.pages import STATES, apply_state, chosen_state

Say = Callable[[str], None]


@dataclass
class Plan:
    suite: Suite
    planned: list[Case]  # every case of the suite
    cases: list[Case]  # those this run runs (--only, --shard)
    shard: tuple[int, int] | None
    only: list[str] | None
    resumed: RunStore | None  # the run being finished (--resume), else None
    pages: str | None = None  # the page state the session runs in (timing/pages.py's chosen_state)
    threads: int | None = None  # torch's threads: --threads, else the resumed run's, else the suite's


def allow_overrides() -> None:
    """`run --allow-override`: plugins may replace built-in names (core/plugins.py); the variable reaches
    Ray workers too (executors/ray.py forwards it)."""
    os.environ[ALLOW_OVERRIDE_VAR] = "1"


def check_executor(name: str, address: str | None, jobs: int | None, say: Say = print) -> Executor:
    if name not in EXECUTORS:
        raise NormbenchError(f"--executor {name!r}: expected one of {', '.join(EXECUTORS)}")
    if name != "ray" and (address or jobs):
        raise NormbenchError("--address and --jobs go with --executor ray")
    if name == "ray":
        bound_ray_waits(address)
        import_ray()  # fail now, before a run folder exists, when Ray is not installed
        jobs = cap_local_jobs(jobs, address, say)
    return Executor(name, address, jobs)


def plan_run(
    suite,  # str | Suite | None
    results: Path,
    *,
    resume: str | None,
    shard: tuple[int, int] | None,
    only: list[str] | None,
    say: Say,
    pages: str | None = None,
    threads: int | None = None,
) -> Plan:
    """The cases to run: a new run of `suite`, or the rest of run `resume` with its own stored suite text,
    --shard, --only, page state and threads (an explicit `pages` or `threads` wins; the session records
    what the plan says; None threads: torch's choice)."""
    check_results_dir(results, create=False)
    store = None
    if resume:
        store = RunStore.open(results, resume)
        check_no_writer(store.path, store.run_id, "resuming")  # an upgrade, say: its pid, not its state
        store.require_current()  # an older result schema is refused before anything is planned or said
        m = resumable(store)
        if suite is not None and Path(suite).resolve() != Path(m.suite_source).resolve():
            say(f"note: --resume uses the suite text stored in the run, not {suite}")
        if shard is not None or only:
            raise NormbenchError("--resume keeps the run's own --shard/--only; do not give them again")
        suite_obj = parse_suite(m.suite_text, m.suite_source, m.suite_includes or {})
        check_suite_hash(m, suite_obj, store.path / "manifest.json")
        shard = tuple(m.shard) if m.shard else None
        only = m.only or None
    else:
        if suite is None:
            raise NormbenchError(
                "give a suite file, e.g. `normbench run suites/quick.toml`, or --resume RUN_ID"
            )

        # a Suite already built (run --bench: suite/adhoc.py), else a file or a shipped suite's name
        suite_obj = suite if isinstance(suite, Suite) else load_suite(resolve(suite))
    planned = expand(suite_obj)
    cases = select(planned, only, shard)
    if store is not None:  # finished under the ids the run recorded, never under today's
        where = store.path / "manifest.json"
        cases = recorded_cases(m, cases, where, say)
        check_overrides(m, where)
    if not cases:
        raise NormbenchError("no case matches the --only/--shard selection")
    state = chosen_state(pages, stored=stored_pages(store) if store else None, suite=suite_obj.pages)
    threads = threads or (stored_threads(store) if store else suite_obj.threads)
    return Plan(suite_obj, planned, cases, shard, only, store, state, threads)


def new_manifest(plan: Plan, run_id: str, env: dict, started: str, tag: str | None = None) -> Manifest:
    s = plan.suite
    kinds = dict.fromkeys(c.kind for c in plan.planned)
    return Manifest(
        run_id=run_id,
        suite=s.name,
        tag=tag,
        suite_source=str(s.source),
        suite_sha256=s.sha256,
        suite_text=s.text,
        suite_includes=s.includes,
        claims=s.claims,
        shard=list(plan.shard) if plan.shard else None,
        only=plan.only or None,
        started=started,
        env=env,
        cases=[{"case_id": c.case_id, "label": c.label} for c in plan.cases],
        sessions=[],
        # one schema for every part, from the whole suite (every shard of it declares the same)
        columns=declare_columns([get_bench(k) for k in kinds], [c.params for c in plan.planned]),
        overrides=list(OVERRIDES) or None,
    )


def execute_plan(
    plan: Plan,
    results: Path,
    *,
    executor: Executor,
    progress: Callable[[list, int], object],
    quiet: bool,
    say: Say,
    run_id: str | None = None,
    tag: str | None = None,
    processes: int | None = None,
) -> tuple[RunStore, RunOutcome, int]:
    """Create the run (or reopen the resumed one) and run one session: (store, outcome, cases left).
    run_id and tag (checked by results/naming.py) name a new run; `processes` (--processes) wins over the
    resumed run's count of fresh processes per timing case, NORMBENCH_PROCESSES and the suite's."""
    if plan.pages:
        apply_state(plan.pages)  # before torch allocates: its allocator reads the state once
    import torch

    store = plan.resumed
    # a resumed run keeps its own count (its cases are timed alike); else the variable over the suite
    processes = processes or (stored_processes(store) if store else None) or env_processes()
    processes = processes or plan.suite.processes or DEFAULT_PROCESSES
    if plan.threads:
        torch.set_num_threads(plan.threads)
    env = fingerprint()
    now = datetime.now(UTC).isoformat(timespec="milliseconds")  # orders runs started within one second
    # The executor starts (and Ray checks that every case can be scheduled) before a run folder exists:
    # a cluster that cannot be reached or cannot run a case leaves nothing behind.
    with executor.started(plan.cases, torch.get_num_threads(), say):
        if store is None:
            check_results_dir(results, create=True)
            run_id = run_id or new_run_id(plan.suite.name, plan.shard, tag)
            store = RunStore.create(results, new_manifest(plan, run_id, env, now, tag).to_dict())
        # One writer per run folder; under the lock the manifest is read again (another writer may have
        # finished in between) and every part is verified before it counts as done.
        with writing(store, say) as store:
            if plan.resumed is not None:
                warn_if_environment_changed(store.manifest["env"], env, say)
            done = store.verify_parts(say)
            outcome, remaining = run_session(
                store, plan.cases, done, now, executor, progress, quiet, say, processes, plan.pages
            )
    return store, outcome, remaining


def run_session(
    store, cases, done: set[str], now: str, executor, progress, quiet: bool, say: Say, processes=1, pages=None
):
    """Run the cases not yet done as one session recorded in the manifest: (outcome, cases left). The
    record says the plan's page state (its timing processes start in it) and the threads torch runs."""
    import torch

    todo = [c for c in cases if c.case_id not in done]
    session = len(store.manifest.get("sessions", []))
    if not quiet:
        env = store.manifest.get("env", {})
        say(
            f"run {store.run_id}: {len(todo)} of {len(cases)} cases to run "
            f"({threads_phrase(torch.get_num_threads())}, {env.get('gpu') or env.get('cpu')})"
        )
    ctx = RunContext(threads=torch.get_num_threads(), processes=processes, pages=pages, quiet=quiet)
    sessions = store.manifest.get("sessions", [])
    sessions.append(
        {
            "started": now,
            "pid": os.getpid(),
            "threads": ctx.threads,
            "processes": ctx.processes,
            **({"pages": pages} if pages else {}),  # a resumed run may mix states
            "cases": len(todo),
            "executor": executor.name,
        }
    )
    write_manifest(store, sessions=sessions, status="running")
    try:
        with progress(todo, len(cases) - len(todo)) as shown:  # the cases to run, and those done before
            outcome = executor.run(store, todo, ctx, session=session, progress=shown, say=say)
    except KeyboardInterrupt as exc:  # a second Ctrl-C: the case in flight is lost, every finished one kept
        outcome = RunOutcome(interrupted=True, signal=getattr(exc, "signal", signal.SIGINT))
        outcome.statuses.update(stored_statuses(store, done))  # what this session ran, from its parts
    except BaseException:  # anything else (a SystemExit from library code): never leave `running` behind
        close_session(store, cases, sessions)
        raise
    remaining, write_error = close_session(store, cases, sessions)
    outcome.write_error = outcome.write_error or write_error
    if remaining == 0 and write_error is None and not outcome.interrupted:
        write_run_table(store, say)
    return outcome, remaining


def write_run_table(store: RunStore, say: Say) -> None:
    """A completed run's rows in one file, for fast reads (results/table.py); the parts stay the record, so a
    table that cannot be written costs only speed."""
    try:
        store.write_table()
    except (OSError, NormbenchError) as exc:
        say(f"note: the run's rows were not written as one file ({exc}); reads open every part instead")
    except KeyboardInterrupt:  # the run is complete and stored: stopping now loses nothing but the speed-up
        say("note: stopped before the run's rows were written as one file; reads open every part instead")


def stored_statuses(store: RunStore, before: set[str]) -> Counter:
    """The statuses of the cases stored since `before` (the parts of this session), read from their parts:
    what the closing line counts when the session was stopped without its outcome."""
    import pyarrow.parquet as pq

    counts: Counter = Counter()
    for part in sorted(store.parts.glob("*.parquet")):
        if part.stem in before:
            continue
        try:
            status = pq.read_table(part, columns=["status"]).column("status")[0].as_py()
        except Exception:  # a part the next --resume moves aside: not counted
            continue
        counts[status] += 1
    return counts


def close_session(store, cases, sessions) -> tuple[int, OSError | None]:
    """Record the session's end and the run's status (complete, or interrupted with cases left)."""
    sessions[-1]["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    remaining = len({c.case_id for c in cases} - store.finished_case_ids())
    status = "complete" if remaining == 0 else "interrupted"
    try:
        store.update_manifest(sessions=sessions, status=status)
    except OSError as exc:  # the parts are the record; `list runs` shows a run with no writer as interrupted
        return remaining, exc
    return remaining, None


def resumable(store: RunStore) -> Manifest:
    """The run's manifest, when it holds what --resume needs (RESUME_KEYS)."""
    problem = manifest_problem(store.manifest, store.path.name, required=("run_id", *RESUME_KEYS))
    if problem:
        raise NormbenchError(f"{store.path / 'manifest.json'}: cannot resume: {problem}")
    return Manifest.from_dict(store.manifest)


def stored_threads(store: RunStore) -> int | None:
    """The first session's thread count, through the suite's validator (torch segfaults on 10**8)."""
    sessions = store.manifest.get("sessions") or [{}]
    value, problem = THREADS.coerce(sessions[0].get("threads") or 1)
    if problem:
        raise NormbenchError(
            f"{store.path / 'manifest.json'}: damaged manifest: sessions[0].threads: {problem}"
        )
    return value if sessions[0].get("threads") else None


def stored_processes(store: RunStore) -> int:
    """The first session's count of fresh processes per timing case; 1 for a run started before runs
    recorded one (it was timed in its own process: --resume times the rest the same way)."""
    sessions = store.manifest.get("sessions") or [{}]
    try:
        return check_processes(sessions[0].get("processes", 1), where="sessions[0].processes")
    except NormbenchError as exc:
        raise NormbenchError(f"{store.path / 'manifest.json'}: damaged manifest: {exc}") from None


def stored_pages(store: RunStore) -> str | None:
    """The page state the run was started in (its env, written by the first session), None when unknown."""
    value = (store.manifest.get("env") or {}).get("pages")
    return value if value in STATES else None


def write_manifest(store: RunStore, **fields) -> None:
    try:
        store.update_manifest(**fields)
    except OSError as exc:
        raise NormbenchError(f"cannot write {store.path / 'manifest.json'}: {exc.strerror or exc}") from None


def warn_if_environment_changed(old: dict, new: dict, say: Say) -> None:
    keys = ["hostname", "cpu", "gpu", "torch", "torch_threads", "pages", "cuda"]
    changed = [f"{k}: {old.get(k)} -> {new.get(k)}" for k in keys if old.get(k) != new.get(k)]
    if changed:
        say("warning: resuming in a different environment; rows will mix them (" + "; ".join(changed) + ")")
