"""Process-to-process CV of the median, normbench vs the plain peer, in one command:

    python scripts/experiments/pages_cv.py [--processes 10] [--pages huge|base] [--quick]

The grid: LayerNorm, RMSNorm (torch modules) and the copy (identity:copy, a clone) at 4096x1024 and 2048x2048,
fp32 and bf16, fwd and fwd+bwd: 24 cases at 1 thread. normbench: one fresh `normbench run` process times
the whole grid (defaults, under the page state), the case order reversed every other process. The peer: a
fresh process per repetition running torch.utils.benchmark's blocked_autorange over the same cases, plain
(no allocator policy, no page state: what a user's own script gets). Processes alternate normbench / peer.
Per case: the CV of the per-process medians over the first 5 and over all N processes, for each side, and
normbench's "adj CV": the CV of median / machine_slowdown (the case's canary reading over its process's best,
docs/methodology.md "Machine speed"), and "can CV": the CV of median / canary_time (the canary's absolute
reading, which also sees a process slow throughout): how much of the spread is the machine's own speed.
Goal per case, judged on the raw medians: normbench's CV <= 1/2 of the peer's and <= 2%. It prints the machine, the load average
before and after, and each figure with its goal. A benchmark, not a test: run it on a quiet machine;
--quick (2 processes each, one small shape, fp32 fwd) only checks that it runs.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NORMS = ("layernorm:module", "rmsnorm:module", "identity:copy")
SHAPES = ((4096, 1024), (2048, 2048))
DTYPES = ("fp32", "bf16")
MODES = ("fwd", "fwd+bwd")
GOAL_RATIO, GOAL_CV = 0.5, 0.02

# The plain peer: the same semantics as normbench's step (fwd under inference_mode; fwd+bwd resets the
# gradients, then forward and backward with a fixed upstream gradient).
PEER = r"""
import json, sys
import torch
from torch.utils.benchmark import Timer
torch.set_num_threads(1)
out = []
for norm, tokens, hidden, dtype, mode in json.loads(sys.argv[1]):
    dt = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype]
    x = torch.randn(tokens, hidden, generator=torch.Generator().manual_seed(0)).to(dt)
    if norm == "identity:copy":
        m, params = (lambda t: t.clone()), []
    else:
        m = {"layernorm:module": torch.nn.LayerNorm, "rmsnorm:module": torch.nn.RMSNorm}[norm](hidden, dtype=dt)
        params = list(m.parameters())
    if mode == "fwd":
        def call():
            with torch.inference_mode():
                m(x)
    else:
        xg = x.clone().requires_grad_(True)
        dy = torch.randn_like(x)
        leaves = [xg, *params]
        def call():
            for p in leaves:
                p.grad = None
            m(xg).backward(dy)
    out.append(Timer("call()", globals={"call": call}, num_threads=1).blocked_autorange().median)
print(json.dumps(out))
"""


def grid(quick: bool) -> list[tuple]:
    if quick:
        return [(n, 512, 256, "fp32", "fwd") for n in NORMS]
    return [(n, t, h, d, m) for n in NORMS for t, h in SHAPES for d in DTYPES for m in MODES]


def suite_text(cases: list[tuple], extra: list[str] = ()) -> str:
    """One [[bench]] per case, in the given order; `extra` lines (`key = value`) go in every bench's params."""
    lines = ['name = "pages-cv"', "threads = 1", ""]
    for norm, tokens, hidden, dtype, mode in cases:
        lines += ["[[bench]]", 'kind = "latency"', f'norms = ["{norm}"]', "[bench.params]"]
        lines += [f"tokens = {tokens}", f"d = {hidden}", f'dtype = "{dtype}"', f'mode = "{mode}"', *extra, ""]
    return "\n".join(lines)


def run_normbench(cases: list[tuple], work: Path, pages: str | None, extra: list[str] = ()) -> dict:
    """{case: median seconds} of one process, and per case its huge_page_share under key ('share', case) and
    its machine_slowdown and canary_time under ('slowdown', case) and ('canary', case)."""
    import pandas as pd

    stamp = time.monotonic_ns()
    suite, results = work / f"suite-{stamp}.toml", work / f"results-{stamp}"
    suite.write_text(suite_text(cases, extra))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    args = [sys.executable, "-m", "normbench", "run", str(suite), "--quiet", "--results", str(results)]
    proc = subprocess.run(
        args + (["--pages", pages] if pages else []), env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        sys.exit(f"normbench run failed:\n{proc.stderr[-2000:]}")
    frame = pd.concat(pd.read_parquet(p) for p in glob.glob(f"{results}/*/parts/*.parquet"))
    out = {}
    for metric, key in (
        ("time_median", None),
        ("huge_page_share", "share"),
        ("machine_slowdown", "slowdown"),
        ("canary_time", "canary"),
    ):
        for r in frame[frame["metric"] == metric].itertuples():
            case = (f"{r.norm}:{r.impl}", int(r.tokens), int(r.d), r.dtype, r.mode)
            out[case if key is None else (key, case)] = float(r.value)
    return out


def run_peer(cases: list[tuple]) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NORMBENCH_PAGES", "THP_MEM_ALLOC_ENABLE")}
    proc = subprocess.run(
        [sys.executable, "-c", PEER, json.dumps(cases)], env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        sys.exit(f"peer failed:\n{proc.stderr[-2000:]}")
    return dict(zip(cases, json.loads(proc.stdout.strip().splitlines()[-1]), strict=True))


def cv(values: list[float]) -> float:
    return statistics.stdev(values) / statistics.fmean(values) if len(values) > 1 else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--processes", type=int, default=10, help="fresh processes per side (default 10)")
    ap.add_argument("--pages", choices=("huge", "base"), help="normbench's page state (default: its own)")
    ap.add_argument("--quick", action="store_true", help="smoke test: 2 processes, 512x256 fp32 fwd")
    ap.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a latency parameter for every case "
        "(TOML value, e.g. min_run_s=1.0 or stat='\"min\"'); repeatable",
    )
    ap.add_argument("--raw", action="store_true", help="also print every process's median per case")
    args = ap.parse_args()
    n = 2 if args.quick else args.processes
    cases = grid(args.quick)
    sys.path.insert(0, str(ROOT))
    from normbench.timing.pages import default_state, kernel_thp

    pages = args.pages or default_state()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; {kernel_thp()}")
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; normbench pages={pages}")
    if args.param:
        print(f"normbench parameters for every case: {', '.join(args.param)}")
    t0 = time.perf_counter()
    ours, peers = [], []
    with tempfile.TemporaryDirectory(prefix="pages-cv-") as tmp:
        for i in range(n):
            ordered = cases if i % 2 == 0 else cases[::-1]
            ours.append(
                run_normbench(
                    ordered, Path(tmp), pages, args.param and [p.replace("=", " = ", 1) for p in args.param]
                )
            )
            peers.append(run_peer(ordered))
            print(f"  process pair {i + 1}/{n} done ({time.perf_counter() - t0:.0f} s)", flush=True)
    counts = sorted({min(5, n), n})
    head = f"{'case':<44}" + "".join(
        f"{f'nb CV{k}':>9}{f'adj CV{k}':>10}{f'can CV{k}':>10}{f'peer CV{k}':>11}" for k in counts
    )
    print("\n" + head + f"{'nb µs':>9}{'peer µs':>9}{'huge share':>11}  goal")
    met = 0
    for case in cases:
        a = [o[case] for o in ours]
        b = [p[case] for p in peers]
        # the median over the machine's slowdown at the time, and over the canary's reading (NaN where the
        # run stored none)
        adj = [o[case] / o.get(("slowdown", case), float("nan")) for o in ours]
        per_canary = [o[case] / o.get(("canary", case), float("nan")) for o in ours]
        cells, ok = "", True
        for k in counts:
            ca, cb = cv(a[:k]), cv(b[:k])
            cells += f"{100 * ca:>8.1f}%{100 * cv(adj[:k]):>9.1f}%{100 * cv(per_canary[:k]):>9.1f}%{100 * cb:>10.1f}%"
            ok = ok and ca <= GOAL_RATIO * cb and ca <= GOAL_CV
        share = statistics.median(o.get(("share", case), float("nan")) for o in ours)
        met += ok
        label = " ".join(str(c) for c in case)
        print(
            f"{label:<44}{cells}{statistics.median(a) * 1e6:>9.0f}{statistics.median(b) * 1e6:>9.0f}"
            f"{share:>11.2f}  {'MET' if ok else 'NOT MET'}"
        )
        if args.raw:  # under its case row
            slow = [o.get(("slowdown", case), float("nan")) for o in ours]
            canaries = [o.get(("canary", case), float("nan")) for o in ours]
            print(
                f"{'':<4}normbench µs: {' '.join(f'{v * 1e6:.0f}' for v in a)}; peer: {' '.join(f'{v * 1e6:.0f}' for v in b)}"
                f"; machine_slowdown: {' '.join(f'{v:.2f}' for v in slow)}"
                f"; canary µs: {' '.join(f'{v * 1e6:.1f}' for v in canaries)}"
            )
            # the processes timed in the machine's calm phase: their canary within 10% of the fastest one
            known = [c for c in canaries if c == c]
            calm = [v for v, c in zip(a, canaries, strict=True) if known and c <= 1.1 * min(known)]
            print(f"{'':<4}calm phase: {len(calm)} of {len(a)} processes, CV {100 * cv(calm):.1f}%")
    print(
        f"\n{met} of {len(cases)} cases meet the goal (normbench CV <= {GOAL_RATIO:g} x the plain peer's and "
        f"<= {100 * GOAL_CV:g}%, over {' and '.join(map(str, counts))} processes; judged on the raw medians, "
        "not on adj or can)"
    )
    print(
        f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; "
        f"total {time.perf_counter() - t0:.0f} s"
    )


if __name__ == "__main__":
    main()
