"""Does `make bench-compare` raise false alarms, and does it catch a real regression? A benchmark, not a test.

Runs PAIRS `make bench` + `make bench-compare` pairs on the unchanged code, then PLANTED pairs whose
bench-compare runs with NORMBENCH_BENCH_SLOWDOWN=3 (every micro-benchmark calls its target three times, see
tests/test_microbench.py), each pair in a fresh storage folder, and prints

    pairs flagged: k/PAIRS, planted slowdown flagged: m/PLANTED

(a pair is flagged when bench-compare exits non-zero with its FAIL line). Beside the verdicts it prints, from
the two JSON files of each pair, the largest new/saved ratio of the median and of the minimum over the
benchmarks of an unchanged pair (the noise a threshold must clear) and the smallest of a planted pair (the
signal it must catch). Exit 0 when no unchanged pair and every planted pair was flagged, 1 otherwise, 2 when a
make target failed for another reason. About 75 s a pair on 2 loaded cores: 7 pairs in under 10 minutes.

    python scripts/experiments/bench_gate.py [--pairs 5] [--planted 2] [--slowdown 3] [--fail min:50%]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def make(target: str, storage: Path, fail: str | None, extra_env: dict[str, str]) -> tuple[int, str]:
    """(exit status, the `bench-compare:` line or the output's tail) of one make target."""
    args = ["make", "-s", "--no-print-directory", target, f"BENCH_STORAGE={storage}"]
    if fail:
        args.append(f"BENCH_FAIL={fail}")
    done = subprocess.run(
        args, cwd=REPO, env={**os.environ, **extra_env}, capture_output=True, text=True, check=False
    )
    text = done.stdout + done.stderr
    line = next((ln for ln in text.splitlines() if ln.startswith("bench-compare:")), None)
    return done.returncode, line or text.strip()[-2000:]


def ratios(storage: Path) -> dict[str, tuple[float, float]]:
    """{benchmark: (new median / saved median, new min / saved min)} from the pair's two JSON files."""

    def stats(name: str) -> dict[str, dict]:
        data = json.loads((storage / name).read_text())
        return {b["fullname"]: b["stats"] for b in data["benchmarks"]}

    saved, new = stats("bench.json"), stats("compare.json")
    return {
        k.split("::")[-1]: (new[k]["median"] / saved[k]["median"], new[k]["min"] / saved[k]["min"])
        for k in new
        if k in saved
    }


def run_pair(index: int, planted: int, slowdown: int, fail: str | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as tmp:
        storage = Path(tmp)
        start = time.monotonic()
        rc, out = make("bench", storage, fail, {})
        if rc != 0:
            raise SystemExit(f"pair {index}: `make bench` failed (exit {rc}):\n{out}")
        env = {"NORMBENCH_BENCH_SLOWDOWN": str(slowdown)} if planted else {}
        rc, line = make("bench-compare", storage, fail, env)
        if not line.startswith("bench-compare:"):
            raise SystemExit(f"pair {index}: `make bench-compare` gave no verdict (exit {rc}):\n{line}")
        return {
            "planted": planted,
            "flagged": rc != 0 and " FAIL " in line,
            "line": line,
            "ratios": ratios(storage),
            "seconds": time.monotonic() - start,
        }


def describe(pair: dict, worst) -> str:
    """The pair's verdict, and its extreme median and min ratios (max for unchanged, min for planted)."""
    r = pair["ratios"]
    med = worst(r, key=lambda k: r[k][0])
    low = worst(r, key=lambda k: r[k][1])
    kind = "planted" if pair["planted"] else "unchanged"
    verdict = pair["line"].split(":", 1)[1].split("(")[0].strip()
    return (
        f"{kind:<9} {verdict:<9} median ratio {r[med][0]:.2f}x ({med}), min ratio {r[low][1]:.2f}x ({low}), "
        f"{pair['seconds']:.0f} s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5, help="pairs on unchanged code (default 5)")
    parser.add_argument("--planted", type=int, default=2, help="pairs with the planted slowdown (default 2)")
    parser.add_argument("--slowdown", type=int, default=3, help="the planted slowdown factor (default 3)")
    parser.add_argument("--fail", default=None, help="BENCH_FAIL for bench-compare (default: the Makefile's)")
    args = parser.parse_args()
    if args.pairs < 1 or args.planted < 0 or args.slowdown < 2:
        parser.error("need --pairs >= 1, --planted >= 0, --slowdown >= 2")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"bench-gate: {args.pairs} + {args.planted} pairs; load average {load:.1f} on {os.cpu_count()} CPUs"
    )
    results = []
    for i in range(args.pairs + args.planted):
        planted = int(i >= args.pairs)
        pair = run_pair(i + 1, planted, args.slowdown, args.fail)
        results.append(pair)
        print(f"  pair {i + 1}: " + describe(pair, min if planted else max), flush=True)
        if pair["flagged"]:
            print(f"    {pair['line']}", flush=True)
    plain = [p for p in results if not p["planted"]]
    planted = [p for p in results if p["planted"]]
    k, m = sum(p["flagged"] for p in plain), sum(p["flagged"] for p in planted)
    noise = max(max(v[0] for v in p["ratios"].values()) for p in plain)
    print(f"pairs flagged: {k}/{len(plain)}, planted slowdown flagged: {m}/{len(planted)}")
    print(f"  largest median ratio on unchanged code: {noise:.2f}x", end="")
    if planted:
        signal = min(min(v[0] for v in p["ratios"].values()) for p in planted)
        print(f"; smallest under the planted {args.slowdown}x slowdown: {signal:.2f}x")
    else:
        print()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"  load average at the end {load:.1f}; {sum(p['seconds'] for p in results):.0f} s in all")
    return 0 if k == 0 and m == len(planted) else 1


if __name__ == "__main__":
    sys.exit(main())
