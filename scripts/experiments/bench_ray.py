"""Scale-out benchmark: wall time of one suite under the local executor and under `--executor ray` on this
machine, the speedup, and what more workers would give (simulated from the measured per-case times: the
longest-first list schedule that Ray's queue approximates; it is a projection, not a measurement).

    python scripts/experiments/bench_ray.py [SUITE] [--jobs N]      (default: suites/scaleout.toml, N = every core)

Run it on an otherwise idle machine; it runs the suite twice, one executor after the other."""

from __future__ import annotations

import argparse
import heapq
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed_run(suite: Path, results: Path, extra: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "normbench", "run", str(suite), "--quiet", "-r", str(results), *extra],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"run failed ({done.returncode}):\n{done.stderr}")
    return wall


def case_walls(results: Path) -> list[float]:
    from normbench.results.store import read_runs

    frame, _ = read_runs(results, ["latest"])
    return frame[frame["metric"] == "case_wall_s"]["value"].tolist()


def makespan(walls: list[float], workers: int) -> float:
    """Longest-first greedy schedule of independent cases on `workers` equal workers."""
    loads = [0.0] * workers
    for w in sorted(walls, reverse=True):
        heapq.heappush(loads, heapq.heappop(loads) + w)
    return max(loads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", nargs="?", default="suites/scaleout.toml", type=Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        local = timed_run(args.suite, Path(tmp) / "local", [])
        ray = timed_run(args.suite, Path(tmp) / "ray", ["--executor", "ray", "--jobs", str(args.jobs)])
        walls = case_walls(Path(tmp) / "local")
        ray_walls = case_walls(Path(tmp) / "ray")
    load = os.getloadavg()[0]
    print(f"suite {args.suite}: {len(walls)} cases, {os.cpu_count()} cores, load average now {load:.2f}")
    print(f"local executor: {local:7.1f} s wall  (sum of case walls {sum(walls):.1f} s)")
    print(f"ray, {args.jobs} jobs:   {ray:7.1f} s wall  (sum of case walls {sum(ray_walls):.1f} s)")
    print(
        f"speedup: {local / ray:.2f}x   (ideal for {args.jobs} jobs: {sum(walls) / makespan(walls, args.jobs):.2f}x)"
    )
    print("projection from the local per-case times (not measured): workers -> wall, speedup")
    for n in (2, 4, 8, 16, 32):
        span = makespan(walls, n)
        print(f"  {n:>3} -> {span:7.1f} s  {sum(walls) / span:5.2f}x")


if __name__ == "__main__":
    main()
