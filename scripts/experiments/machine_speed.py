"""Is a spread between processes the process's state or the machine's speed over time? Fresh processes, each
timing rounds of 0.3 s of [LayerNorm 4096x1024, RMSNorm 4096x1024, clone 4096x1024, LayerNorm 512x256] (the
last is cache-resident and compute-bound: it slows only when the core does), fp32 forward, 1 thread, with
normbench's allocator policy; the page states alternate process by process. Per process: each op's median of
its round medians, and the CV of the round medians over time inside the process. Then, per state and op, the
CV of the process medians across processes. The figures behind docs/methodology.md "Machine speed".

    python scripts/experiments/machine_speed.py [--processes 4] [--rounds 10] [--pages huge,base]

A benchmark, not a test: run it with nothing else running, and say what load there was.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import ctypes, json, statistics, sys, time
libc = ctypes.CDLL(None); libc.mallopt(-4, 0); libc.mallopt(-1, 2**31 - 1)  # timing/process.py's policy
import torch
torch.set_num_threads(1)
g = torch.Generator().manual_seed(0)
x, xs = torch.randn(4096, 1024, generator=g), torch.randn(512, 256, generator=g)
ln, rms, ln_small = torch.nn.LayerNorm(1024), torch.nn.RMSNorm(1024), torch.nn.LayerNorm(256)
ops = {"layernorm 4096x1024": lambda: ln(x), "rmsnorm 4096x1024": lambda: rms(x),
       "clone 4096x1024": lambda: x.clone(), "layernorm 512x256": lambda: ln_small(xs)}
def window_median(fn, seconds=0.3):
    times, end = [], time.perf_counter() + seconds
    while time.perf_counter() < end:
        t = time.perf_counter(); fn(); times.append(time.perf_counter() - t)
    return statistics.median(times)
with torch.inference_mode():
    for fn in ops.values():
        for _ in range(30): fn()  # warm-up: every page a call needs is mapped once
    rounds = {name: [] for name in ops}
    for _ in range(int(sys.argv[1])):
        for name, fn in ops.items():
            rounds[name].append(window_median(fn))
print(json.dumps(rounds))
"""


def cv(values: list[float]) -> float:
    return statistics.pstdev(values) / statistics.fmean(values)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--processes", type=int, default=4, help="fresh processes per page state (default 4)")
    ap.add_argument("--rounds", type=int, default=10, help="rounds of 0.3 s per op in each process")
    ap.add_argument("--pages", default="huge,base", help="page states to alternate: huge, base or both")
    args = ap.parse_args()
    states = [s.strip() for s in args.pages.split(",") if s.strip()]
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    medians: dict[str, dict[str, list[float]]] = {s: {} for s in states}
    for i in range(args.processes):
        for state in states if i % 2 == 0 else states[::-1]:
            env = dict(os.environ, THP_MEM_ALLOC_ENABLE="1" if state == "huge" else "0")
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(args.rounds)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            rounds = json.loads(out.stdout)
            cells = []
            for name, values in rounds.items():
                medians[state].setdefault(name, []).append(statistics.median(values))
                cells.append(
                    f"{name} {statistics.median(values) * 1e6:.0f} µs (in time {100 * cv(values):.1f}%)"
                )
            print(f"process {i + 1} {state:<4}: " + "; ".join(cells), flush=True)
    print("\nacross processes (CV of each process's median of round medians):")
    for state, ops in medians.items():
        print(f"  {state:<4}: " + "; ".join(f"{n} {100 * cv(v):.1f}%" for n, v in ops.items()))
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
