"""The local executor (the default): a run's cases one after another in this process, each stored as it
finishes; Ctrl-C or SIGTERM stops after the current case, a failed write stops the run."""

from __future__ import annotations

from normbench.benches import RunContext
from normbench.core.case import Case
from normbench.results.store import RunStore
from normbench.runner import RunOutcome, StopAfterCase, run_one, store_finished


def run_cases(
    store: RunStore, cases: list[Case], ctx: RunContext, *, session: int, progress=None, say=print
) -> RunOutcome:
    outcome = RunOutcome()
    queue = list(cases)
    with StopAfterCase(say) as stop:
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
