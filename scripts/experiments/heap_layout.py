"""Does a new heap layout every round keep a process's layout draw out of a latency ratio? The small cases whose
`time_vs_ref` moved 1.1-1.3x between two unchanged quick runs (ops with temporaries at 512 rows), in fresh
processes, `layout = "fixed"` and `layout = "shift"` alternating so drifting load falls on both. Per variant
and case: the spread of `time_vs_ref_median` over the processes (max/min), then over the cases the median and
the largest spread and the number of cases whose spread is beyond 1.1 (compare's default --factor); then the
gate's own test: `normbench compare` of every pair of the variant's runs (exit codes counted), and with
`--split K` of K runs against K others in random splits. The figures behind docs/methodology.md, "Paired
rounds" (heap layout). A benchmark: run it on a quiet machine.

    python scripts/experiments/heap_layout.py [--runs 10] [--variants fixed,shift] [--split 3] [--busy] [--keep DIR]

A variant may set environment variables for its processes: `shift+PYTHONHASHSEED=0`.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITE = """name = "layout-{variant}"
threads = 1
[[bench]]
kind = "latency"
norms = ["layernorm", "rmsnorm", "batchnorm", "identity"]
[bench.sweep]
d = [256, 1024]
dtype = ["fp32", "bf16"]
mode = ["fwd", "fwd+bwd"]
[bench.params]
tokens = 512
layout = "{variant}"
[[bench]]
kind = "latency"
norms = ["dyt", "layernorm:module"]
[bench.sweep]
input = ["shifted", "lowvar"]
[bench.params]
tokens = 256
d = 512
layout = "{variant}"
"""


def one_run(variant: str, results: Path) -> tuple[str, dict[str, float]]:
    """(run id, case -> time_vs_ref_median) of one fresh `normbench run` of a variant."""
    import pandas as pd

    layout, *assignments = variant.split("+")
    env = {**os.environ, **dict(a.split("=", 1) for a in assignments)}
    name = variant.replace("+", "-").replace("=", "")
    suite = results / f"{name}.toml"
    suite.write_text(SUITE.format(variant=layout).replace(f'layout-{layout}"', f'layout-{name}"', 1))
    cmd = [sys.executable, "-m", "normbench", "run", str(suite), "--quiet", "--results", str(results)]
    out = (
        subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
        .stdout.strip()
        .splitlines()[-1]
    )
    run_id = out.split("stored in ")[-1].split("/")[-1]
    df = pd.read_parquet(results / run_id / "parts")
    rows = df[df.metric == "time_vs_ref_median"]
    key = rows.norm + ":" + rows.impl + " " + rows.d.astype(str) + " " + rows.dtype + " " + rows["mode"]
    return run_id, dict(zip(key + " " + rows["input"], rows.value, strict=True))


def compare_exits(results: Path, sides: list[tuple[list[str], list[str]]]) -> dict[int, int]:
    """exit code -> how many of the `normbench compare BASE NEW` calls (runs joined by commas) gave it."""
    exits: dict[int, int] = {}
    for base, new in sides:
        cmd = [sys.executable, "-m", "normbench", "compare", ",".join(base), ",".join(new)]
        code = subprocess.run([*cmd, "--results", str(results)], capture_output=True, check=False).returncode
        exits[code] = exits.get(code, 0) + 1
    return dict(sorted(exits.items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=8, help="fresh processes per variant (default 8)")
    ap.add_argument("--variants", default="fixed,shift")
    ap.add_argument("--busy", action="store_true", help="one core kept busy by a spinning Python process")
    ap.add_argument("--split", type=int, default=0, help="also compare K runs against K others (K <= runs/2)")
    ap.add_argument("--splits", type=int, default=8, help="random splits with --split (default 8)")
    ap.add_argument("--keep", type=Path, help="store the runs here (default: a temporary folder)")
    args = ap.parse_args()
    variants = args.variants.split(",")
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    runs: dict[str, list[str]] = {v: [] for v in variants}
    readings: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        try:
            for i in range(args.runs):
                for v in variants if i % 2 == 0 else reversed(variants):
                    start = time.perf_counter()
                    run_id, values = one_run(v, where)
                    runs[v].append(run_id)
                    readings[v].append(values)
                    wall = time.perf_counter() - start
                    print(f"run {i + 1} {v}: {wall:.1f} s, load {os.getloadavg()[0]:.1f}", flush=True)
        finally:
            if spin is not None:
                spin.kill()
        for v in variants:
            cases = sorted(set.intersection(*(set(r) for r in readings[v])))
            spreads = {c: max(r[c] for r in readings[v]) / min(r[c] for r in readings[v]) for c in cases}
            worst = sorted(spreads, key=spreads.get, reverse=True)[:3]
            print(
                f"{v}: {len(cases)} cases x {args.runs} processes; spread max/min: median "
                f"{statistics.median(spreads.values()):.3f}, largest {max(spreads.values()):.3f}, "
                f"beyond 1.1 in {sum(s > 1.1 for s in spreads.values())}; widest "
                + ", ".join(f"{c} {spreads[c]:.3f}" for c in worst)
            )
            pairs = [([a], [b]) for a, b in itertools.combinations(runs[v], 2)]
            print(f"  compare, every pair ({len(pairs)}): exits {compare_exits(where, pairs)}", flush=True)
            if args.split and 2 * args.split <= len(runs[v]):
                rng = random.Random(0)
                picks = [rng.sample(runs[v], 2 * args.split) for _ in range(args.splits)]
                splits = [(p[: args.split], p[args.split :]) for p in picks]
                k = args.split
                print(
                    f"  compare, {k} vs {k} runs ({args.splits} splits): exits {compare_exits(where, splits)}"
                )


if __name__ == "__main__":
    main()
