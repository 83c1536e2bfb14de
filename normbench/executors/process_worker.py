"""One fresh process of a run's timing cases: `python -m normbench.executors.process_worker PLAN OUT`
(executors/processes.py starts k of them, one after another). PLAN names the cases (already given this
process's share of the rounds), the thread count, page state, the seed of this process's case order and
a case to time first and alone (one a process died timing, with its peers); OUT
receives {"start": case_id} before each case and then its result, so the parent knows which case a dying
process was timing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from normbench.executors.processes import time_share
from normbench.timing.fresh import write_line
from normbench.timing.pages import apply_state


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
