"""One fresh process of a run's timing cases: `python -m normbench.executors.process_worker PLAN OUT`, or
started ahead, `... --wait OUT [PAGES]` (timing/fresh.py's Started: it imports torch, then waits for PLAN).
executors/processes.py starts k - 1 of them together and gives them their plans one after another. PLAN names the cases (already given this
process's share of the rounds), the thread count, page state, the seed of this process's case order and
a case to time first and alone (one a process died timing, with its peers); OUT
receives {"start": case_id} before each case and then its result, so the parent knows which case a dying
process was timing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from normbench.benches import all_benches
from normbench.executors.processes import time_share
from normbench.timing.fresh import wait_for_plan, worker_args, write_line
from normbench.timing.pages import apply_state


def main(argv: list[str]) -> int:
    plan_path, out_path, rest = worker_args(argv)
    pages = rest[0] if rest else None
    if plan_path is not None:
        pages = json.loads(Path(plan_path).read_text()).get("pages")
    if pages:
        apply_state(pages)  # before torch allocates (timing/pages.py)
    import torch

    all_benches()  # the bench modules too, while a worker started ahead waits
    if plan_path is None and (plan_path := wait_for_plan()) is None:
        return 0  # started ahead and never needed
    plan = json.loads(Path(plan_path).read_text())

    if plan.get("threads"):
        torch.set_num_threads(int(plan["threads"]))
    with open(out_path, "w") as out:
        write_line(out, {"ready": True})
        time_share(plan, torch.get_num_threads(), lambda record: write_line(out, record))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
