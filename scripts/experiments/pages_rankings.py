"""Does the page state change conclusions? One command:

    python scripts/experiments/pages_rankings.py [--suites quick,latency] [--repeats 1] [--quick]

Runs the latency cases of each suite (`normbench run SUITE --only 'latency*'`: fwd and fwd+bwd, fp32 and
bf16 in both shipped suites) under `--pages base` and `--pages huge`, alternating, `--repeats` times each,
and prints per case group (every parameter but the norm and implementation: shape, dtype, mode, cache,
input, ...) the ranking of norms and implementations under each state (by the case's statistic, the median
over repeats) and whether it changed. With --repeats 2 or more it also says whether the ranking changed
between two runs of the same state (the noise floor: a change across states means little where the same
state also reorders). Ends with a markdown table for docs/methodology.md ("Pages"). It prints the machine
and the load average before and after. A benchmark, not a test: run it on a quiet machine; --quick (an
ad-hoc 3-norm suite at one small shape) only checks that it runs.
"""

from __future__ import annotations

import argparse
import glob
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATES = ("base", "huge")
QUICK_SUITE = """name = "pages-rank-quick"
threads = 1
[[bench]]
kind = "latency"
norms = ["layernorm:module", "rmsnorm:module", "identity"]
[bench.sweep]
mode = ["fwd", "fwd+bwd"]
[bench.params]
tokens = 512
d = 1024
preset = "fast"
"""


def run(suite: str, state: str, work: Path):
    """The ok cases of one `normbench run` as a frame: one row per case, its group and its time."""
    import pandas as pd

    results = work / f"{state}-{time.monotonic_ns()}"
    args = [sys.executable, "-m", "normbench", "run", suite, "--only", "latency*", "--pages", state]
    args += ["--quiet", "--results", str(results)]
    proc = subprocess.run(args, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True)
    if proc.returncode not in (0, 1):  # 1: some case failed or was skipped (a missing third-party kernel)
        sys.exit(f"normbench run {suite} --pages {state} failed:\n{proc.stderr[-2000:]}")
    frame = pd.concat(pd.read_parquet(p) for p in glob.glob(f"{results}/*/parts/*.parquet"))
    frame = frame[frame["status"] == "ok"]
    stat = frame["stat"] if "stat" in frame.columns else "median"
    timed = frame[frame["metric"] == "time_" + stat]
    return timed


def group_columns(frame) -> list[str]:
    """The latency parameters that vary within the frame: norm and impl are what is ranked."""
    from normbench.benches import get_bench

    names = [c for c in get_bench("latency").params if c in frame.columns]
    return [c for c in names if frame[c].astype(str).nunique() > 1]


def rankings(frames: list, cols: list[str]) -> dict:
    """{group: [norm:impl fastest first]} from the median over the frames of each case's time."""
    import pandas as pd

    both = pd.concat(frames)
    both["who"] = both["norm"] + ":" + both["impl"]
    keys = cols + ["who"]
    med = both.groupby(keys, dropna=False)["value"].median().reset_index()
    out = {}
    for group, part in med.groupby(cols, dropna=False) if cols else [((), med)]:
        group = group if isinstance(group, tuple) else (group,)
        out[group] = list(part.sort_values("value")["who"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--suites", default="quick,latency", help="shipped suites or files (default quick,latency)"
    )
    ap.add_argument(
        "--repeats", type=int, default=1, help="runs per state and suite, alternating (default 1)"
    )
    ap.add_argument("--quick", action="store_true", help="smoke test: an ad-hoc 3-norm suite, one shape")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from normbench.timing.pages import kernel_thp

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; {kernel_thp()}")
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    t0 = time.perf_counter()
    table = [
        "| suite | case group | base pages (fastest first) | huge pages | changed |",
        "|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory(prefix="pages-rank-") as tmp:
        work = Path(tmp)
        suites = args.suites.split(",")
        if args.quick:
            (work / "quick.toml").write_text(QUICK_SUITE)
            suites = [str(work / "quick.toml")]
        for suite in suites:
            runs = {s: [] for s in STATES}
            for i in range(args.repeats):
                for state in STATES if i % 2 == 0 else STATES[::-1]:
                    runs[state].append(run(suite, state, work))
                    print(f"  {suite} --pages {state}: run {len(runs[state])} done", flush=True)
            cols = group_columns(runs["base"][0])
            ranked = {s: rankings(runs[s], cols) for s in STATES}
            noise = {
                s: [rankings([r], cols) for r in runs[s][:2]] if args.repeats > 1 else None for s in STATES
            }
            name = Path(suite).stem
            changed = 0
            for group in sorted(ranked["base"], key=str):
                a, b = ranked["base"][group], ranked["huge"].get(group, [])
                same_state = [n[0].get(group) != n[1].get(group) for n in noise.values() if n and len(n) == 2]
                flag = "no" if a == b else "yes"
                if a != b and any(same_state):
                    flag += " (so does a rerun of one state)"
                changed += a != b
                desc = ", ".join(f"{c}={v}" for c, v in zip(cols, group, strict=True))
                table.append(f"| {name} | {desc} | {' < '.join(a)} | {' < '.join(b)} | {flag} |")
            print(f"{name}: the ranking changed in {changed} of {len(ranked['base'])} case groups")
    print("\n" + "\n".join(table))
    print(
        f"\nload average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; "
        f"total {time.perf_counter() - t0:.0f} s"
    )


if __name__ == "__main__":
    main()
