"""A run's CPU timing cases (latency, block) timed in k processes, one after another: k - 1 fresh ones
(process_worker.py), then this one. Each times every case with its share of the rounds (Bench.process_share)
in its own shuffled order; a case's rows are merged over its processes (Bench.merge_processes). A process that
dies: a new one times the case it was timing first and alone (a peer timed with it may have killed it), then
the rest; a case that kills its process alone fails with the reason, unstored, so --resume times it again.
Why processes: docs/methodology.md, "Intervals over processes"."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from dataclasses import dataclass

from normbench.benches import RunContext, get_bench
from normbench.core.case import Case
from normbench.core.errors import NormbenchError
from normbench.runner import run_one
from normbench.suite.validate import MAX_PROCESSES
from normbench.timing.fresh import Fresh, Started, run_fresh

WORKER = "normbench.executors.process_worker"
DEFAULT_PROCESSES = 4
ENV_VAR = "NORMBENCH_PROCESSES"
ORDER_SEED = 4700  # process i shuffles its cases with ORDER_SEED + i (a replacement process: + 1000)
# Fresh processes started ahead, together, before the first times (timing/fresh.py's Started): their torch
# imports overlap; more would each hold an idle interpreter with torch (~250 MB) for the whole timing
AHEAD = 7


def check_processes(value, where: str = "--processes") -> int:
    """A process count from the command line or the suite: an integer 1..MAX_PROCESSES (NormbenchError)."""
    text = str(value).strip()
    if isinstance(value, bool) or not text.lstrip("+").isdigit():
        raise NormbenchError(f"{where}: {value!r} is not a whole number of processes (1..{MAX_PROCESSES})")
    k = int(text)
    if not 1 <= k <= MAX_PROCESSES:
        raise NormbenchError(f"{where}: {k} processes; expected 1..{MAX_PROCESSES}")
    return k


def env_processes() -> int | None:
    """NORMBENCH_PROCESSES, checked, when set (what a CI job or a test session sets once)."""
    value = os.environ.get(ENV_VAR)
    return check_processes(value, where=ENV_VAR) if value else None


def spread(case: Case, k: int) -> bool:
    """Whether `case` is timed across processes: a CPU case of a bench that times sides, k > 1."""
    return k > 1 and get_bench(case.kind).times_sides and case.params.get("device", "cpu") == "cpu"


@dataclass
class Timed:
    """A case's outcome over its processes; `died` names why a process died timing it (nothing stored:
    --resume times it again)."""

    rows: list[dict]
    status: str
    error: str | None
    died: str | None = None


def case_of(d: dict) -> Case:
    return Case(
        d["kind"],
        d["norm"],
        d["impl"],
        d["params"],
        d["bench_index"],
        d["case_id"],
        tuple(d.get("swept") or ()),
        d.get("timeout_s"),
        tuple(d.get("unhashed") or ()),
    )


def time_share(plan: dict, threads: int, emit) -> None:
    """Run the plan's cases in its shuffled order (the alone case first, without peers), emitting
    {"start": case_id} before each and its result after: in a worker, and for the first process in the run's
    own process (executors/processes.py)."""
    queue = [case_of(d) for d in plan["cases"]]
    random.Random(plan["seed"]).shuffle(queue)  # its own case order: round sets form around other owners
    alone = plan.get("alone")  # a case a process died timing: first, without peers (processes.py)
    queue.sort(key=lambda c: c.case_id != alone)
    ctx = RunContext(threads=threads)
    while queue:
        if ctx.ready:  # cases timed ahead with an earlier one go next, as in executors/local.py
            queue.sort(key=lambda c: c.case_id not in ctx.ready)
        case = queue.pop(0)
        ctx.upcoming = [] if case.case_id == alone else queue
        emit({"start": case.case_id})
        rows, status, error = run_one(case, ctx)
        emit({"case_id": case.case_id, "rows": rows, "status": status, "error": error})


def run_here(plan: dict, threads: int | None) -> Fresh:
    """The last process's share in this process: what a worker would have written, as lines."""
    import torch

    lines: list[dict] = []
    time_share(json.loads(json.dumps(plan)), threads or torch.get_num_threads(), lines.append)
    return Fresh(lines, 0, "")


def case_plan(case: Case, params: dict) -> dict:
    return {
        "kind": case.kind,
        "norm": case.norm,
        "impl": case.impl,
        "params": params,
        "bench_index": case.bench_index,
        "case_id": case.case_id,
        "swept": list(case.swept),
        "timeout_s": case.timeout_s,
        "unhashed": list(case.unhashed),
    }


def time_in_processes(
    cases: list[Case],
    k: int,
    *,
    threads: int | None,
    pages: str | None,
    say: Callable[[str], None] = print,
    stop=None,
    here: bool = True,
) -> dict[str, Timed] | None:
    """{case_id: Timed} for every case, or None when `stop` was requested between processes (nothing is
    kept: a case needs all its processes). here: the last process is this one (a process draw like any
    other; a fresh one costs an interpreter and torch's import, ~1.5 s), after the fresh ones have found any
    case that kills its process."""
    fresh = k - 1 if here else k
    ahead = [Started(WORKER, *([pages] if pages else [])) for _ in range(min(fresh, AHEAD))]
    try:
        for worker in ahead:  # every import done before the first process times (Started)
            worker.ready()
        return _time_each(cases, k, ahead, threads=threads, pages=pages, say=say, stop=stop, here=here)
    finally:
        for worker in ahead:
            worker.close()


def _time_each(cases, k, ahead, *, threads, pages, say, stop, here) -> dict[str, Timed] | None:
    results: dict[str, list] = {c.case_id: [] for c in cases}
    died: dict[str, str] = {}
    for i in range(k):
        if stop is not None and stop.requested:
            return None
        todo = [
            case_plan(c, get_bench(c.kind).process_share(c.params, i, k))
            for c in cases
            if c.case_id not in died
        ]
        if todo:
            where = "this process" if i == k - 1 and here else "a fresh process"
            say(f"process {i + 1}/{k} ({where}): {len(todo)} timing cases")
        seed, alone = ORDER_SEED + i, None
        while todo:
            plan = {"cases": todo, "threads": threads, "pages": pages, "seed": seed, "alone": alone}
            if i == k - 1 and here:
                done = run_here(plan, threads)
            elif ahead:  # a worker started ahead; a replacement for one that died starts now
                done = ahead.pop(0).run(plan)
            else:
                done = run_fresh(WORKER, plan)
            finished = {r["case_id"]: r for r in done.lines if "case_id" in r}
            for cid, r in finished.items():
                results[cid].append((i, r["rows"], r["status"], r["error"]))
            if not done.died:
                break
            started = [r["start"] for r in done.lines if "start" in r]
            culprit = started[-1] if started and started[-1] not in finished else None
            left = [d for d in todo if d["case_id"] not in finished]
            reason = f"process {i + 1} of {k}: {done.reason}"
            if culprit is None:  # it died before timing anything (its imports): every case left shares it
                died.update({d["case_id"]: reason for d in left})
                break
            seed += 1000
            if culprit != alone:  # it may have been timing a peer with it: the case first and alone next
                say(f"process {i + 1}/{k} died timing {culprit} ({done.reason}); timing it alone")
                todo, alone = left, culprit
                continue
            died[culprit] = reason  # it died alone: its own doing
            say(
                f"process {i + 1}/{k} died timing {culprit} alone: {done.reason}; a new process times the rest"
            )
            todo, alone = [d for d in left if d["case_id"] != culprit], None
    out = {}
    for c in cases:
        if c.case_id in died:
            out[c.case_id] = Timed([], "failed", died[c.case_id], died=died[c.case_id])
        elif not results[c.case_id]:  # no process returned it (never expected): nothing to merge
            out[c.case_id] = Timed(
                [], "failed", "no process returned the case", died="no process returned it"
            )
        else:
            out[c.case_id] = Timed(*get_bench(c.kind).merge_processes(results[c.case_id]))
    return out
