"""Runs one case and stores it, for every executor (executors/local.py, executors/ray.py). A case that
raises, or runs past its `timeout_s`, is stored as failed (or skipped/unavailable) with its reason and the
run goes on; Ctrl-C or SIGTERM stops after the current case; a write that fails (disk full, read-only)
stops the run."""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field

from normbench.benches import RunContext, get_bench
from normbench.core.case import Case
from normbench.core.errors import CaseTimeout, SkipCase, UnavailableCase, debug_enabled
from normbench.results.schema import FAILED_STATUSES, check_rows
from normbench.results.store import RunStore


@dataclass
class RunOutcome:
    statuses: Counter = field(default_factory=Counter)
    interrupted: bool = False
    signal: int = signal.SIGINT  # what interrupted the run: 130 for SIGINT, 143 for SIGTERM
    failures: list[tuple[str, str]] = field(default_factory=list)
    write_error: OSError | None = None  # a part that could not be written: the run stopped there

    @property
    def exit_code(self) -> int:
        if self.write_error is not None:
            return 2
        if self.interrupted:
            return 128 + int(self.signal)
        return 1 if any(self.statuses[s] for s in FAILED_STATUSES) else 0


class StopNow(KeyboardInterrupt):
    """The second Ctrl-C or SIGTERM: stop at once; carries the signal for the exit code (128 + signal)."""

    def __init__(self, signum: int):
        self.signal = signal.Signals(signum)
        super().__init__(self.signal.name)


class StopAfterCase:
    """First Ctrl-C or SIGTERM (what `timeout`, scancel and SLURM's time limit send): finish the current
    case (or, under a parallel executor, the cases in flight), then stop. A second one: stop now (the case
    in flight is lost; every finished one is kept)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, say, what: str = "the current case"):
        self.requested = False
        self.signal = signal.SIGINT
        self.last: int | None = None  # the latest signal this guard saw
        self.say = say
        self.what = what

    def __enter__(self):
        self.previous = {s: signal.signal(s, self._handle) for s in self.SIGNALS}
        outer = getattr(self.previous.get(signal.SIGTERM), "__self__", None)
        if isinstance(outer, SignalsBetweenGuards) and outer.pending:  # one came before this guard: its first
            self.requested, self.signal = True, signal.Signals(outer.pending.pop(0))
        return self

    def _handle(self, signum, frame):
        self.last = signum
        if self.requested:
            raise StopNow(signum)
        self.requested, self.signal = True, signal.Signals(signum)
        name = "interrupt" if signum == signal.SIGINT else self.signal.name
        self.say(f"{name}: stopping after {self.what} (Ctrl-C again to stop now)")

    def __exit__(self, exc_type, exc, tb):
        if isinstance(exc, KeyboardInterrupt) and not hasattr(exc, "signal") and self.last is not None:
            # a library re-raised our StopNow as a plain KeyboardInterrupt (seen under Ray: a second
            # SIGTERM exited 130): the signal that stopped the run still decides the exit code
            exc.signal = signal.Signals(self.last)
        for s, handler in self.previous.items():
            signal.signal(s, handler)


class SignalsBetweenGuards:
    """The outermost guard of a command-line run. Between the executors' own guards (planning, writing the
    run's record after a stop, shutting Ray down) a Ctrl-C or SIGTERM would otherwise meet the default
    action and kill the process with its record half-written; here it is kept: the next StopAfterCase takes
    it as its first signal, and one after the cases have stopped only waits for the record to be written."""

    def __init__(self, say):
        self.say = say
        self.pending: list[int] = []

    def __enter__(self):
        self.previous = {s: signal.signal(s, self._keep) for s in StopAfterCase.SIGNALS}
        return self

    def _keep(self, signum, frame):
        self.pending.append(signum)
        self.say(f"{signal.Signals(signum).name}: stopping once the run's record is written")

    def __exit__(self, *exc):
        for s, handler in self.previous.items():
            signal.signal(s, handler)


class _TimeLimit:
    """Raise CaseTimeout in the main thread once `seconds` have passed (SIGALRM via setitimer). Python runs
    the handler between bytecodes, so a single long C call (one big matmul) finishes before the case stops;
    without SIGALRM (Windows) or off the main thread there is no limit."""

    def __init__(self, seconds: float | None):
        usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        self.seconds = seconds if usable else None

    def __enter__(self):
        if self.seconds:
            self.previous = signal.signal(signal.SIGALRM, self._expire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def _expire(self, signum, frame):
        raise CaseTimeout(self.seconds)

    def __exit__(self, *exc):
        if self.seconds:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)


def run_one(case: Case, ctx: RunContext) -> tuple[list[dict], str, str | None]:
    """Run one case; never raises except KeyboardInterrupt (SystemExit and any other BaseException a
    plugin raises make the case failed). Returns rows, status, error."""
    started_unix = time.time()
    start = time.perf_counter()
    try:
        if case.case_id in ctx.ready:  # measured ahead, with an earlier case (RunContext.ready)
            result = ctx.ready.pop(case.case_id)
            if isinstance(result, BaseException):
                raise result
        else:
            with _TimeLimit(case.timeout_s):
                result = get_bench(case.kind).run_case(case, ctx)
        rows, status, error = result.rows, result.status, result.error
    except CaseTimeout as exc:  # rows measured before the limit are incomplete: only the reason is kept
        rows, status, error = [], "failed", str(exc)
        _release_device_memory()
    except SkipCase as exc:
        rows, status, error = [], "skipped", str(exc)
    except UnavailableCase as exc:
        rows, status, error = [], "unavailable", str(exc)
    except KeyboardInterrupt:
        raise
    except SystemExit as exc:  # sys.exit() in a plugin's code ends its case, not the run
        rows, status, error = [], "failed", f"the case called sys.exit({exc.code!r})"
    except BaseException as exc:  # a failing case is a result, not a crash: OOM, unsupported dtype, NaN ...
        if debug_enabled():
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


def store_finished(store, case, rows, status, error, *, session, outcome, progress=None) -> None:
    """Write one finished case through the store and count it: what every executor does with a result.
    An OSError (the disk) propagates: the executor stops and --resume finishes."""
    for row in rows:
        row["session"] = session
    rows, problem = check_rows(rows, store.columns)
    if problem:  # a bench emitted a column the run's schema lacks: its values are kept, the case fails
        status, error = "failed", f"rows do not fit the run's schema: {problem}"
    status, error = _store(store, case, rows, status, error)
    outcome.statuses[status] += 1
    if status in FAILED_STATUSES:
        outcome.failures.append((case.short_label, error or ""))
    if progress is not None:
        progress.end_case(case, status)


def _store(store: RunStore, case: Case, rows: list[dict], status: str, error: str | None):
    """Write the case; rows that cannot form a table (a plugin bench mixing a string into `value`) make the
    case failed with the reason instead of stopping the run. OSError (the disk) propagates."""
    try:
        store.write_case(case, rows, status, error)
    except OSError:
        raise
    except Exception as exc:
        status, error = "failed", f"its rows could not be stored: {_one_line(exc)}"
        store.write_case(case, [], status, error)
    return status, error


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    line = text[0] if text else type(exc).__name__
    return line[:500]


def _release_device_memory() -> None:
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()
