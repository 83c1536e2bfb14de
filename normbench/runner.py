"""Runs cases one after another and stores each as it finishes. A case that raises is stored as failed
(or skipped/unavailable) with its reason and the run goes on; Ctrl-C stops after the current case."""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field

from normbench.benches import RunContext, get_bench
from normbench.errors import SkipCase, UnavailableCase
from normbench.results.schema import FAILED_STATUSES, check_rows
from normbench.results.store import RunStore
from normbench.suite.expand import Case


@dataclass
class RunOutcome:
    statuses: Counter = field(default_factory=Counter)
    interrupted: bool = False
    failures: list[tuple[str, str]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        return 1 if any(self.statuses[s] for s in FAILED_STATUSES) else 0


class StopAfterCase:
    """First Ctrl-C: finish the current case, then stop. Second Ctrl-C: stop now."""

    def __init__(self, say, what: str = "the current case"):
        self.requested = False
        self.say = say
        self.what = what

    def __enter__(self):
        self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        self.say(f"interrupt: stopping after {self.what} (Ctrl-C again to stop now)")

    def __exit__(self, *exc):
        signal.signal(signal.SIGINT, self.previous)


def run_one(case: Case, ctx: RunContext) -> tuple[list[dict], str, str | None]:
    """Run one case; never raises except KeyboardInterrupt. Returns rows, status, error."""
    started_unix = time.time()
    start = time.perf_counter()
    try:
        result = get_bench(case.kind).run_case(case, ctx)
        rows, status, error = result.rows, result.status, result.error
    except SkipCase as exc:
        rows, status, error = [], "skipped", str(exc)
    except UnavailableCase as exc:
        rows, status, error = [], "unavailable", str(exc)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # a failing case is a result, not a crash: OOM, unsupported dtype, NaN ...
        if os.environ.get("NORMBENCH_DEBUG"):
            traceback.print_exc()
        rows, status, error = [], "failed", _one_line(exc)
        _release_device_memory()
    rows.append({"metric": "case_wall_s", "unit": "s", "value": time.perf_counter() - start})
    # Wall-clock start and end: with several workers they show which cases overlapped on which node.
    rows.append({"metric": "case_started_unix", "unit": "s", "value": started_unix})
    rows.append({"metric": "case_finished_unix", "unit": "s", "value": time.time()})
    # The 1-minute load average at the end of the case: above the core count, other processes competed
    # for the CPU while this case was timed, and the report says so.
    if hasattr(os, "getloadavg"):
        rows.append({"metric": "loadavg_1m", "unit": "processes", "value": os.getloadavg()[0]})
    host = socket.gethostname()
    for row in rows:
        row.setdefault("node", host)
    return rows, status, error


def run_cases(
    store: RunStore, cases: list[Case], ctx: RunContext, *, session: int, progress=None, say=print
) -> RunOutcome:
    outcome = RunOutcome()
    with StopAfterCase(say) as stop:
        for case in cases:
            if stop.requested:
                outcome.interrupted = True
                break
            if progress is not None:
                progress.start_case(case)
            rows, status, error = run_one(case, ctx)
            store_finished(
                store, case, rows, status, error, session=session, outcome=outcome, progress=progress
            )
    return outcome


def store_finished(store, case, rows, status, error, *, session, outcome, progress=None) -> None:
    """Write one finished case through the store and count it: what every executor does with a result."""
    for row in rows:
        row["session"] = session
    rows, problem = check_rows(rows, store.columns)
    if problem:  # a bench emitted a column the run's schema lacks: its values are kept, the case fails
        status, error = "failed", f"rows do not fit the run's schema: {problem}"
    store.write_case(case, rows, status, error)
    outcome.statuses[status] += 1
    if status in FAILED_STATUSES:
        outcome.failures.append((case.short_label, error or ""))
    if progress is not None:
        progress.end_case(case, status)


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    line = text[0] if text else type(exc).__name__
    return line[:500]


def _release_device_memory() -> None:
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()
