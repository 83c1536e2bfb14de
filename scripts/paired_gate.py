"""Does latency hold on a shared machine? The paired-rounds goals, measured (a benchmark, not a test):

  --cv         time_vs_ref of RMSNorm vs LayerNorm (module) 4096x1024, 1 thread, in PROCESSES fresh processes,
               fwd, fwd+bwd and bf16 fwd: the CV across processes (goal <= 2% quiet, <= 3% one core busy)
  --pairs N    N pairs of unchanged `normbench run quick` + `normbench compare A B`: the exit codes (goal 0)
  --plant F    N pairs of quick runs with the plugin norm plantnorm (scripts/plant/normbench_plant.py), the
               second with NORMBENCH_PLANT=F: compare's exit and whether it names plantnorm (goal: 1 and named)
  --busy       keep one core busy meanwhile (a second Python process spinning at normal priority)

Prints one line per measurement; wall times of each quick run too. Run it on a quiet machine.
    python scripts/paired_gate.py --cv --pairs 5 [--plant 1.3] [--busy]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NB = [sys.executable, "-m", "normbench"]
CV_SUITE = """
name = "paired-cv"
threads = 1
[[bench]]
kind = "latency"
norms = ["layernorm:module", "rmsnorm:module"]
[bench.sweep]
mode = ["fwd", "fwd+bwd"]
dtype = ["fp32", "bf16"]
[bench.params]
tokens = 4096
d = 1024
"""


def env(**extra) -> dict:
    path = os.pathsep.join([str(REPO / "scripts" / "plant"), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, **extra}


@contextmanager
def busy(on: bool):
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if on else None
    try:
        yield
    finally:
        if proc is not None:
            proc.kill()


def run(suite: str, results: Path, *args: str, **extra) -> tuple[str, float]:
    """(run id, wall seconds) of `normbench run SUITE --quiet ARGS`, `extra` in its environment."""
    start = time.perf_counter()
    done = subprocess.run(
        [*NB, "run", suite, "--quiet", "--results", str(results), *args],
        env=env(**extra),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"run {suite} failed: {done.stderr[-500:]}")
    return done.stdout.strip().splitlines()[-1], time.perf_counter() - start


def compare(results: Path, a: str, b: str) -> tuple[int, dict]:
    done = subprocess.run(
        [*NB, "compare", a, b, "--results", str(results), "--format", "json"],
        env=env(),
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, json.loads(done.stdout) if done.stdout.strip().startswith("{") else {}


def cv(processes: int, results: Path) -> None:
    import pandas as pd

    suite = results / "paired-cv.toml"
    suite.write_text(CV_SUITE)
    ratios: dict[str, list[float]] = {}
    for _ in range(processes):
        run_id, _ = run(str(suite), results)
        frame = pd.read_parquet(results / run_id / "parts")
        rows = frame[(frame["metric"] == "time_vs_ref_median") & (frame["norm"] == "rmsnorm")]
        for params, value in zip(rows["params"], rows["value"], strict=True):
            p = json.loads(params)
            ratios.setdefault(f"{p['dtype']} {p['mode']}", []).append(value)
    for key, values in sorted(ratios.items()):
        print(
            f"cv {key}: time_vs_ref CV {statistics.stdev(values) / statistics.mean(values):.1%} "
            f"over {len(values)} processes ({', '.join(f'{v:.3f}' for v in values)})"
        )


def pairs(n: int, results: Path, plant: float | None) -> None:
    suite = "quick"
    if plant:
        text = (REPO / "suites" / "quick.toml").read_text()
        text += '\n[[bench]]\nkind = "latency"\nnorms = ["plantnorm"]\n[bench.sweep]\ntokens = [512]\n'
        text += 'd = [256, 1024]\ndtype = ["fp32", "bf16"]\nmode = ["fwd", "fwd+bwd"]\n'
        (results / "planted.toml").write_text(text.replace('name = "quick"', 'name = "planted"'))
        suite = str(results / "planted.toml")
    for i in range(n):
        extra = {"NORMBENCH_PLUGINS": "normbench_plant"} if plant else {}
        a, ta = run(suite, results, **extra)
        b, tb = run(suite, results, **extra, **({"NORMBENCH_PLANT": str(plant)} if plant else {}))
        code, data = compare(results, a, b)
        named = sorted({r["case"].split()[0] for r in data.get("regressions", [])})
        print(
            f"pair {i + 1}{f' plant {plant}' if plant else ''}: compare exit {code}; regressions {named}; "
            f"{data.get('verdict', '')[:120]}; quick wall {ta:.1f} s, {tb:.1f} s; load {os.getloadavg()[0]:.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cv", action="store_true")
    parser.add_argument("--processes", type=int, default=6)
    parser.add_argument("--pairs", type=int, default=0)
    parser.add_argument("--plant", type=float, default=None)
    parser.add_argument("--busy", action="store_true")
    parser.add_argument("--keep", type=Path, help="keep the runs in this folder (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="paired-gate-") as tmp, busy(args.busy):
        results = args.keep or Path(tmp)
        results.mkdir(parents=True, exist_ok=True)
        print(f"load {os.getloadavg()[0]:.1f}; busy core: {args.busy}")
        if args.cv:
            cv(args.processes, results)
        if args.pairs:
            pairs(args.pairs, results, args.plant)


if __name__ == "__main__":
    main()
