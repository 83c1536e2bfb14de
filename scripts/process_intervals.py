"""Do the intervals cover where a rerun lands? Latency timed in k fresh processes, measured (a benchmark, not a
test; docs/methodology.md, "Intervals over processes"):

  --coverage N   N unchanged runs of a 36-case latency suite (LayerNorm, RMSNorm, DyT and the copy probe at
                 512x256 and 512x1024, fp32 and bf16, fwd: fused kernels and ones with temporaries); for every
                 ordered pair of runs (A, B), the share of cases whose time_vs_ref in B lies inside A's
                 interval (goal >= 0.80 quiet, >= 0.70 one core busy), and the intervals' median width
  --cv N         RMSNorm/LayerNorm module time_vs_ref, 4096x1024 fp32 fwd, 1 thread, N fresh runs: CV (<= 2%),
                 and each process's LayerNorm and RMSNorm time over the copy probe's (their spread shows a level
                 the process keeps); --cv-variant 'NAME=TOML' (repeatable) adds bench params, e.g.
                 'cold=cache = "cold"', and the variants' runs alternate
  --pairs N      N pairs of unchanged `normbench run quick` through `normbench compare A B`: exits (never 1)
  --planted M    M pairs whose second run has plantnorm doing --plant F (1.3) times the work: exit 1 naming it
  --wall N       N back-to-back pairs of quick at --processes 1 (one process, as before) and the default
  --processes K  the runs' --processes (default: the suite's, else normbench's default); --busy: one core busy

    python scripts/process_intervals.py --coverage 6 --cv 6 --pairs 10 --planted 5 --wall 2 [--busy]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paired_gate import busy, compare  # noqa: E402  (the gate script's helpers)
from paired_gate import run as gate_run  # noqa: E402

COVER_SUITE = """
name = "intervals"
threads = 1
[[bench]]
kind = "latency"
norms = ["layernorm", "rmsnorm", "dyt", "identity"]
[bench.sweep]
tokens = [512]
d = [256, 1024]
dtype = ["fp32", "bf16"]
mode = ["fwd"]
"""
CV_SUITE = """
name = "intervals-cv"
threads = 1
[[bench]]
kind = "latency"
norms = ["layernorm:module", "rmsnorm:module"]
[bench.params]
tokens = 4096
d = 1024
"""


def run(suite: str, results: Path, processes: int | None, **extra) -> tuple[str, float]:
    return gate_run(suite, results, *(["--processes", str(processes)] if processes else []), **extra)


def ratios(results: Path, run_id: str) -> dict[str, tuple[float, float, float]]:
    """{case_id: (time_vs_ref median, lo, hi)} of a run's ok cases."""
    import pandas as pd

    frame = pd.read_parquet(results / run_id / "parts")
    if "process" in frame:
        frame = frame[frame["process"].isna()]
    wide = frame[frame["status"] == "ok"].pivot_table(
        index="case_id", columns="metric", values="value", aggfunc="first"
    )
    cols = ["time_vs_ref_median", "time_vs_ref_lo", "time_vs_ref_hi"]
    wide = wide[cols].dropna()
    return {cid: tuple(row) for cid, row in zip(wide.index, wide.to_numpy(), strict=True)}


def coverage(n: int, results: Path, processes: int | None) -> None:
    suite = results / "intervals.toml"
    suite.write_text(COVER_SUITE)
    runs, walls = [], []
    for _ in range(n):
        run_id, wall = run(str(suite), results, processes)
        runs.append(ratios(results, run_id))
        walls.append(wall)
    shares = []
    for a, b in itertools.permutations(runs, 2):
        common = set(a) & set(b)
        inside = sum(a[c][1] <= b[c][0] <= a[c][2] for c in common)
        shares.append(inside / len(common))
    widths = [r[2] / r[1] for run_ in runs for r in run_.values()]
    spread = [
        max(r[c][0] for r in runs) / min(r[c][0] for r in runs) for c in set.intersection(*map(set, runs))
    ]
    print(
        f"coverage over {len(shares)} ordered pairs of {n} runs ({len(runs[0])} cases): "
        f"{statistics.mean(shares):.2f} (pairs {min(shares):.2f}–{max(shares):.2f}); interval hi/lo median "
        f"{statistics.median(widths):.3f}, largest {max(widths):.3f}; reruns' max/min median "
        f"{statistics.median(spread):.3f}, largest {max(spread):.3f}; wall {statistics.median(walls):.1f} s a run"
    )


def per_process(results: Path, run_id: str) -> dict[str, list[float]]:
    """{norm: that norm's time_vs_copy in each process} of a run: the level each process kept."""
    import pandas as pd

    frame = pd.read_parquet(results / run_id / "parts")
    rows = frame[frame["metric"] == "time_vs_copy_process"].sort_values("process")
    return {norm: list(group["value"]) for norm, group in rows.groupby("norm")}


def cv(n: int, results: Path, processes: int | None, variants: list[str]) -> None:
    params = dict(v.split("=", 1) for v in variants) if variants else {"default": ""}
    values: dict[str, list[float]] = {name: [] for name in params}
    for i in range(n):
        for name, extra in params.items():  # alternating, so the variants share the machine's phases
            suite = results / f"intervals-cv-{i}-{name}.toml"
            lines = [line.strip() for line in extra.split(";") if line.strip()]
            keys = {line.split("=")[0].strip() for line in lines}  # a variant's key replaces the suite's
            base = [line for line in CV_SUITE.splitlines() if line.split("=")[0].strip() not in keys]
            suite.write_text("\n".join(base + lines) + "\n")
            run_id, _ = run(str(suite), results, processes)
            values[name] += [v[0] for v in ratios(results, run_id).values()]
            levels = "; ".join(
                f"{norm} {' '.join(f'{x:.2f}' for x in xs)}"
                for norm, xs in per_process(results, run_id).items()
            )
            print(
                f"  run {i + 1} {name}: time_vs_ref {values[name][-1]:.3f}; per process, time/copy: {levels}"
            )
    for name, vs in values.items():
        print(
            f"cv fp32 fwd 4096x1024 [{name}]: time_vs_ref CV {statistics.stdev(vs) / statistics.mean(vs):.1%} "
            f"over {len(vs)} runs ({', '.join(f'{v:.3f}' for v in vs)})"
        )


def pairs(n: int, results: Path, plant: float | None, processes: int | None) -> None:
    suite = "quick"
    extra = {"NORMBENCH_PLUGINS": "normbench_plant"} if plant else {}
    if plant:
        text = (Path(__file__).resolve().parent.parent / "suites" / "quick.toml").read_text()
        text += '\n[[bench]]\nkind = "latency"\nnorms = ["plantnorm"]\n[bench.sweep]\ntokens = [512]\n'
        text += 'd = [256, 1024]\ndtype = ["fp32", "bf16"]\nmode = ["fwd", "fwd+bwd"]\n'
        (results / "planted.toml").write_text(text.replace('name = "quick"', 'name = "planted"'))
        suite = str(results / "planted.toml")
    for i in range(n):
        a, ta = run(suite, results, processes, **extra)
        b, tb = run(suite, results, processes, **extra, **({"NORMBENCH_PLANT": str(plant)} if plant else {}))
        code, data = compare(results, a, b)
        named = sorted({r["case"].split()[0] for r in data.get("regressions", [])})
        print(
            f"pair {i + 1}{f' plant {plant}' if plant else ''}: compare exit {code}; regressions {named}; "
            f"quick wall {ta:.1f} s, {tb:.1f} s; load {os.getloadavg()[0]:.1f}"
        )


def wall(n: int, results: Path, processes: int | None) -> None:
    for i in range(n):
        _, one = run("quick", results, 1)
        _, many = run("quick", results, processes)
        print(f"wall pair {i + 1}: quick --processes 1 {one:.1f} s, {processes or 'default'} {many:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    for flag in ("--coverage", "--cv", "--pairs", "--planted", "--wall"):
        parser.add_argument(flag, type=int, default=0)
    parser.add_argument("--plant", type=float, default=None)
    parser.add_argument("--processes", type=int, default=None)
    parser.add_argument("--busy", action="store_true")
    parser.add_argument("--cv-variant", action="append", default=[], help="NAME=TOML bench params for --cv")
    parser.add_argument("--keep", type=Path, help="keep the runs in this folder (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="intervals-") as tmp, busy(args.busy):
        results = args.keep or Path(tmp)
        results.mkdir(parents=True, exist_ok=True)
        print(
            f"load {os.getloadavg()[0]:.1f}; busy core: {args.busy}; processes: {args.processes or 'default'}"
        )
        if args.wall:
            wall(args.wall, results, args.processes)
        if args.coverage:
            coverage(args.coverage, results, args.processes)
        if args.cv:
            cv(args.cv, results, args.processes, args.cv_variant)
        if args.pairs:
            pairs(args.pairs, results, None, args.processes)
        if args.planted:
            pairs(args.planted, results, args.plant or 1.3, args.processes)
        print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
