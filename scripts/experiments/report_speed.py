"""How long `normbench report` takes on a stored run, this checkout against another (an older commit's
worktree), timed in alternation so that both see the same machine: wall and CPU seconds per turn, their
medians, and the 1-minute load average before each turn (a busy machine shows in it).

    git worktree add --detach /tmp/before <commit>
    python scripts/experiments/report_speed.py --before /tmp/before --runs 5 latest
    python scripts/experiments/report_speed.py --before /tmp/before --runs 5 latest -- --full

Each turn is a fresh process (imports included: what a user waits for), output to /dev/null, COLUMNS=120.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]


def one_turn(checkout: Path, args: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one `normbench report ARGS` from `checkout`."""
    env = {**os.environ, "COLUMNS": "120", "PYTHONPATH": str(checkout)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "from normbench.cli import main; main()", "report", *args],
        cwd=checkout,
        env=env,
        stdout=subprocess.DEVNULL,
        check=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="the other checkout (a worktree)")
    parser.add_argument("--runs", type=int, default=5, help="turns of each (default 5)")
    parser.add_argument("--results", type=Path, default=HERE / "results", help="the results folder")
    parser.add_argument("run", nargs="?", default="latest", help="the run id (default latest)")
    parser.add_argument("extra", nargs="*", help="more report options, after --")
    opts = parser.parse_args(argv)
    args = [opts.run, "--results", str(opts.results.resolve()), *opts.extra]
    sides = {"before": opts.before.resolve(), "after": HERE}
    times: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
    loads = []
    for turn in range(opts.runs):
        for side, checkout in sides.items():
            loads.append(os.getloadavg()[0])
            wall, cpu = one_turn(checkout, args)
            times[side].append((wall, cpu))
            print(f"turn {turn + 1} {side:<6} wall {wall:6.2f} s  cpu {cpu:6.2f} s  load {loads[-1]:.2f}")
    for side, got in times.items():
        wall = statistics.median(w for w, _ in got)
        cpu = statistics.median(c for _, c in got)
        print(f"{side:<6} median wall {wall:.2f} s, cpu {cpu:.2f} s over {len(got)} turns")
    print(
        f"load average (1 min) before the turns: median {statistics.median(loads):.2f}, max {max(loads):.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
