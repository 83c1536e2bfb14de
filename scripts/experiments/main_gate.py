"""Does the README's main-branch block hold on unchanged code? (a benchmark, not a test).

In a clone of this working tree (scripts/ab_gate.py's), PUSHES times over: `normbench run quick --quiet`, then
the README's block against the last saved baseline, `compare --baseline RUN --deterministic-only`, and the
same pair without --deterministic-only (the block as it was: timings too), then `baseline save RUN`. The
first push has no baseline (exit 2, expected). With --plant, one more push whose commit changes a
deterministic value (rmsnorm's closed-form Jacobian σ_max × 1.001, so the jacobian bench's rel_err moves):
expected exit 1. --busy N: N spinning processes beside it. One line per push: both exit codes, counts.

    python scripts/experiments/main_gate.py [--pushes 10] [--busy [N]] [--plant]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ab_gate import clone, git  # noqa: E402

CLOSED = "return Closed(gamma.abs().max() / r, gain_is_constant(gamma))"


def nb(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(repo), "NORMBENCH_BASELINES": str(repo / "baselines")}
    cmd = [sys.executable, "-m", "normbench", *args, "--results", str(repo / "results")]
    return subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, check=False)


def push(repo: Path, label: str, save: bool) -> None:
    start = time.perf_counter()
    run = nb(repo, "run", "quick", "--quiet")
    run_id = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else "latest"
    answers = {}
    for name, extra in (("deterministic-only", ["--deterministic-only"]), ("with timings", [])):
        done = nb(repo, "compare", "--baseline", run_id, "--format", "json", *extra)
        data = json.loads(done.stdout) if done.stdout.strip().startswith("{") else {}
        worse = sorted({f"{r['bench']}:{r['metric']}" for r in data.get("regressions", [])})
        answers[name] = f"exit {done.returncode} {data.get('counts', {})} {worse[:4]}"
    if save:
        nb(repo, "baseline", "save", run_id)
    wall = time.perf_counter() - start
    print(
        f"{label}: run exit {run.returncode}; README block (--deterministic-only): {answers['deterministic-only']}; "
        f"timings too: {answers['with timings']}; {wall:.0f} s; load {os.getloadavg()[0]:.1f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pushes", type=int, default=10)
    parser.add_argument("--busy", type=int, nargs="?", const=1, default=0)
    parser.add_argument("--plant", action="store_true")
    args = parser.parse_args()
    repo = clone()
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        for i in range(args.pushes):
            push(repo, f"push {i + 1} (unchanged, busy {args.busy})", save=True)
        if args.plant:
            path = repo / "normbench" / "norms" / "rmsnorm.py"
            text = path.read_text()
            assert CLOSED in text, "rmsnorm's closed form moved: update scripts/experiments/main_gate.py"
            path.write_text(text.replace(CLOSED, CLOSED.replace("Closed(", "Closed(1.001 * ", 1), 1))
            git(repo, "commit", "-qam", "plant: rmsnorm's closed-form sigma_max x 1.001")
            push(repo, f"plant (Jacobian value x 1.001, busy {args.busy})", save=False)
    finally:
        for spinner in spinners:
            spinner.kill()
        shutil.rmtree(repo.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
