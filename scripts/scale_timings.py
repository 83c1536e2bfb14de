"""Wall time of normbench's own commands on large runs (compare, report, export, load), old code against new:
each round runs every command once per source tree, the trees alternating (ABAB...), so a phase of a shared
machine slows both alike. A benchmark, not a test; the 1-minute load average is printed before and after.

    python scripts/synthetic_runs.py TEMPLATE OUT --cases 3000      # the runs
    python scripts/scale_timings.py OUT synthetic-3000-base synthetic-3000-copy --tree old=/path/to/main \
        --tree new=. --rounds 2

Each command is a fresh `python -m normbench` (`load`: `python -c "normbench.load(...)"`), its start-up
included, and its peak resident memory (the process's own, from wait4); a command's exit code is printed
beside its time (compare's 0, 1 and 3 are answers, not errors)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def commands(results: str, base: str, copy: str, out: Path) -> dict[str, list[str]]:
    py = [sys.executable]
    return {
        "compare": [*py, "-m", "normbench", "compare", base, copy, "-r", results, "-f", "json"],
        "report": [*py, "-m", "normbench", "report", base, "-r", results],
        "export": [*py, "-m", "normbench", "export", base, "-r", results, "-f", "csv", "-o", str(out)],
        "load": [*py, "-c", f"import normbench; normbench.load({base!r}, results={results!r})"],
    }


def timed(cmd: list[str], tree: Path) -> tuple[float, int, float]:
    """(wall seconds, exit code, peak resident memory in MB: the child's own, from wait4's rusage)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        # cwd: the tree itself; `python -m` puts the working directory first on sys.path, so a run started in
        # another checkout would import that checkout whatever PYTHONPATH says
        proc = subprocess.Popen(cmd, env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        took = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    if code not in (0, 1, 3):
        print(f"  {tree}: {' '.join(cmd[2:5])}: exit {code}: {stderr.strip()[-300:]}")
    return took, code, usage.ru_maxrss / 1024  # Linux: KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results")
    parser.add_argument("base")
    parser.add_argument("copy")
    parser.add_argument("--tree", action="append", required=True, help="NAME=PATH of a normbench checkout")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", action="append", help="compare, report, export, load (default: all)")
    args = parser.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree)
    with tempfile.TemporaryDirectory() as tmp:
        cmds = commands(str(Path(args.results).resolve()), args.base, args.copy, Path(tmp) / "export.csv")
        names = args.only or list(cmds)
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        times: dict[tuple[str, str], list[float]] = {}
        peaks: dict[tuple[str, str], list[float]] = {}
        for r in range(args.rounds):
            for name in names:
                order = list(trees.items()) if r % 2 == 0 else list(trees.items())[::-1]
                for tree_name, path in order:
                    took, code, peak = timed(cmds[name], Path(path).resolve())
                    times.setdefault((name, tree_name), []).append(took)
                    peaks.setdefault((name, tree_name), []).append(peak)
                    load = os.getloadavg()[0]
                    print(
                        f"round {r + 1} {name:<8} {tree_name:<6} {took:7.1f} s  peak {peak:6.0f} MB  "
                        f"exit {code}  load {load:.2f}"
                    )
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for name in names:
            cells = "  ".join(
                f"{t}: median {statistics.median(times[(name, t)]):.1f} s "
                f"({', '.join(f'{x:.1f}' for x in times[(name, t)])}), peak {max(peaks[(name, t)]):.0f} MB"
                for t in trees
            )
            print(f"{name:<8} {cells}")


if __name__ == "__main__":
    main()
