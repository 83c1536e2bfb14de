"""`normbench run` in one call below its options: check them, plan the cases (session.py's plan_run), and
run one session of them (execute_plan) between signal guards. The command parses and prints; this decides."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from normbench.executors.processes import check_processes
from normbench.executors.ray_cluster import Interrupted
from normbench.executors.session import Plan, Say, allow_overrides, check_executor, execute_plan, plan_run
from normbench.results.history import CaseHistory, case_history
from normbench.results.naming import check_new_run_name
from normbench.results.store import RunStore
from normbench.runner import RunOutcome, SignalsBetweenGuards
from normbench.suite.adhoc import adhoc_run_suite
from normbench.timing.pages import check_pages


@dataclass
class RunOptions:
    """The options of `normbench run` past the suite, as parsed (shard as (i, N))."""

    results: Path
    bench: str | None = None  # with norms and bench_flags: a suite built from flags (suite/adhoc.py)
    norms: str | None = None
    bench_flags: list[str] = field(default_factory=list)
    resume: str | None = None
    run_id: str | None = None
    tag: str | None = None
    shard: tuple[int, int] | None = None
    only: list[str] | None = None
    dry_run: bool = False
    quiet: bool = False
    threads: int | None = None
    processes: str | int | None = None  # fresh processes per CPU timing case, checked here
    executor: str = "local"
    address: str | None = None
    jobs: int | None = None
    pages: str | None = None
    allow_override: bool = False

    @classmethod
    def of(cls, params: dict, **parsed) -> RunOptions:
        """From a command's parameters by name (typer's ctx.params; the suite apart), those it parsed further
        overriding. A parameter without a field is a TypeError, never dropped: a renamed flag is not lost."""
        return cls(**{k: v for k, v in {**params, **parsed}.items() if k != "suite"})


@dataclass
class RunResult:
    plan: Plan
    store: RunStore | None = None  # None: a dry run, or stopped before the run folder was made
    outcome: RunOutcome | None = None
    remaining: int = 0  # cases left for a --resume
    stopped: Interrupted | None = None  # a signal before the first case (Ray's start-up): nothing written


# progress(todo, finished, history) -> the context manager that shows the session (cli/_progress.py)
Progress = Callable[[list, int, CaseHistory], object]


def run(suite, options: RunOptions, *, progress: Progress, say: Say) -> RunResult:
    """Plan `suite` (a file, a shipped suite's name, or None with resume) and, unless a dry run, run it."""
    o = options
    check_pages(o.pages)  # a bad --pages or NORMBENCH_PAGES first, before the suite is read
    processes = None if o.processes is None else check_processes(o.processes)
    check_new_run_name(o.results, o.run_id, o.tag, o.resume)
    if o.allow_override:
        allow_overrides()
    runner = check_executor(o.executor, o.address, o.jobs, say=say)
    if o.bench is not None or o.norms is not None:
        suite = adhoc_run_suite(o.bench, o.norms, o.bench_flags, suite, o.resume)
    plan = plan_run(
        suite,
        o.results,
        resume=o.resume,
        shard=o.shard,
        only=o.only,
        say=say,
        pages=o.pages,
        threads=o.threads,
    )
    if o.dry_run:
        return RunResult(plan)
    resumed = plan.resumed.run_id if plan.resumed else None  # its finished cases: this machine's pace
    try:
        with SignalsBetweenGuards(say):
            store, outcome, remaining = execute_plan(
                plan,
                o.results,
                processes=processes,
                executor=runner,
                progress=lambda todo, done: progress(todo, done, case_history(o.results, also=resumed)),
                quiet=o.quiet,
                say=say,
                run_id=o.run_id,
                tag=o.tag,
            )
    except Interrupted as exc:
        return RunResult(plan, stopped=exc)
    return RunResult(plan, store, outcome, remaining)
