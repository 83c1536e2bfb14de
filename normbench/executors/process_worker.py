"""One fresh process of a run's timing cases: `python -m normbench.executors.process_worker PLAN OUT`
(executors/processes.py starts k of them, one after another). PLAN names the cases (already given this
process's share of the rounds), the thread count, page state, the seed of this process's case order and
a case to time first and alone (one a process died timing, with its peers); OUT
receives {"start": case_id} before each case and then its result, so the parent knows which case a dying
process was timing."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from normbench.benches import RunContext
from normbench.core.case import Case
from normbench.runner import run_one
from normbench.timing.fresh import write_line
from normbench.timing.pages import apply_state


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


def main(plan_path: str, out_path: str) -> int:
    plan = json.loads(Path(plan_path).read_text())
    if plan.get("pages"):
        apply_state(plan["pages"])  # before torch allocates (timing/pages.py)
    import torch

    if plan.get("threads"):
        torch.set_num_threads(int(plan["threads"]))
    with open(out_path, "w") as out:
        write_line(out, {"ready": True})
        time_share(plan, torch.get_num_threads(), lambda record: write_line(out, record))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
