"""The local executor (the default): a run's cases one after another in this process, each stored as it
finishes; the CPU timing cases first, in k fresh processes (executors/processes.py). Ctrl-C or SIGTERM
stops after the current case (or process), a failed write stops the run."""

from __future__ import annotations

from normbench.benches import RunContext
from normbench.core.case import Case
from normbench.executors.processes import spread, time_in_processes
from normbench.results.store import RunStore
from normbench.runner import RunOutcome, StopAfterCase, run_one, store_finished


def run_cases(
    store: RunStore, cases: list[Case], ctx: RunContext, *, session: int, progress=None, say=print
) -> RunOutcome:
    outcome = RunOutcome()
    spread_cases = [c for c in cases if spread(c, ctx.processes)]
    queue = [c for c in cases if not spread(c, ctx.processes)]
    with StopAfterCase(say, what="the current case (or timing process)") as stop:
        if spread_cases:
            store_spread(
                store,
                spread_cases,
                ctx,
                session=session,
                outcome=outcome,
                progress=progress,
                say=say,
                stop=stop,
            )
            if outcome.interrupted or outcome.write_error is not None:
                queue = []
        while queue:
            # cases measured ahead with an earlier one (RunContext.ready) go next, and are stored even
            # after a stop was asked for: their work is done
            if ctx.ready:
                queue.sort(key=lambda c: c.case_id not in ctx.ready)  # stable: the plan's order otherwise
            if stop.requested and queue[0].case_id not in ctx.ready:
                outcome.interrupted = True
                break
            case = queue.pop(0)
            ctx.upcoming = queue
            if progress is not None:
                progress.start_case(case)
            rows, status, error = run_one(case, ctx)
            try:
                store_finished(
                    store, case, rows, status, error, session=session, outcome=outcome, progress=progress
                )
            except OSError as exc:  # disk full, read-only, file size limit: stop; --resume finishes
                outcome.write_error = exc
                break
        ctx.upcoming, ctx.ready = [], {}
        outcome.signal = stop.signal
    return outcome


def store_spread(store, cases, ctx, *, session, outcome, progress, say, stop) -> None:
    """Time `cases` in ctx.processes fresh processes and store each; a case whose process died is counted
    failed and not stored, so --resume times it again."""
    told = (lambda _: None) if ctx.quiet else say
    timed = time_in_processes(cases, ctx.processes, threads=ctx.threads, pages=ctx.pages, say=told, stop=stop)
    if timed is None:
        outcome.interrupted = True
        return
    for case in cases:
        t = timed[case.case_id]
        if progress is not None:
            progress.start_case(case)
        if t.died:
            outcome.statuses["failed"] += 1
            outcome.failures.append((case.short_label, t.died))
            if progress is not None:
                progress.end_case(case, "failed")
            continue
        try:
            store_finished(
                store, case, t.rows, t.status, t.error, session=session, outcome=outcome, progress=progress
            )
        except OSError as exc:
            outcome.write_error = exc
            return
