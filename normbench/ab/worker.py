"""One fresh process of `normbench ab`: `python -m normbench.ab.worker PLAN OUT`. PLAN (JSON) names the
cases, the repository, the base worktree (or none: `--base-python` mode, where this process is one side),
the process's seed and thread count; OUT receives one JSON line per case, in the shuffled order the
process timed them. A case that cannot run writes its reason instead; the process goes on."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from normbench.ab.sides import load_base_norms
from normbench.ab.timing import time_case, unavailable_everywhere
from normbench.norms import get_norm
from normbench.timing.fresh import write_line
from normbench.timing.pages import apply_state, chosen_state


def main(plan_path: str, out_path: str) -> int:
    plan = json.loads(Path(plan_path).read_text())
    apply_state(chosen_state(plan.get("pages")))  # before torch allocates (timing/pages.py)
    import torch

    if plan.get("threads"):
        torch.set_num_threads(int(plan["threads"]))

    if plan.get("tree"):
        base_norms = load_base_norms(Path(plan["root"]), Path(plan["tree"]))
    else:  # one side of --base-python mode: this interpreter's norms on both "sides"
        base_norms = get_norm
    cases = list(plan["cases"])
    rng = random.Random(plan["seed"])
    rng.shuffle(cases)  # a different case order in every process
    with open(out_path, "w") as out:
        for case in cases:
            record = {"case_id": case["case_id"]}
            try:
                record.update(time_case(case, base_norms, seed=rng.randrange(2**31)))
            except KeyboardInterrupt:
                raise
            except Exception as exc:  # this case's outcome; the others go on
                record["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[
                    :300
                ]
                record["unavailable"] = unavailable_everywhere(case, base_norms)  # gate.py: = on both sides
            write_line(out, record)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
