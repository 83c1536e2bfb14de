"""Does a whole process draw a level? One latency case (LayerNorm 4096x1024 fwd, 1 thread, defaults) in
fresh processes, variants alternating so drifting load falls on all alike, beside the blocked_autorange peer
in its own fresh processes. Prints each variant's per-process medians, their CV and max/min (the
figures behind docs/methodology.md "Placement" and the selfcheck-bench reading came from these comparisons).

    python scripts/experiments/process_levels.py [--runs N] [--variants default,placements5,malloc,fast,huge,base]
                                                 [--norm rmsnorm:module]

Variants: default (the bench's defaults), placements5 (`placements = 5`), malloc (NORMBENCH_ALLOCATOR=default:
glibc's own malloc policy), fast (`preset = "fast"`), huge and base (the page state, docs/methodology.md
"Pages"), peer (always run). A benchmark: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from latency_trust import cv, run_normbench, run_peer

CASE = (
    'name = "levels"\nthreads = 1\n[[bench]]\nkind = "latency"\nnorms = ["layernorm:module"]\n'
    "[bench.params]\ntokens = 4096\nd = 1024\n"
)
VARIANTS = {  # name -> (extra suite lines, extra environment)
    "default": ("", {}),
    "placements5": ("placements = 5\n", {}),
    "malloc": ("", {"NORMBENCH_ALLOCATOR": "default"}),
    "fast": ('preset = "fast"\n', {}),
    "huge": ("", {"NORMBENCH_PAGES": "huge"}),
    "base": ("", {"NORMBENCH_PAGES": "base"}),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=6, help="fresh processes per variant (default 6)")
    ap.add_argument(
        "--variants", default="default,placements5", help="comma-separated, of: " + ", ".join(VARIANTS)
    )
    ap.add_argument(
        "--norm", default="layernorm:module", help="norm:impl of the case (default layernorm:module)"
    )
    args = ap.parse_args()
    case = CASE.replace('"layernorm:module"', f'"{args.norm}"')
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variant(s) {', '.join(unknown)}; one of {', '.join(VARIANTS)}")
    medians: dict[str, list[float]] = {name: [] for name in [*names, "peer"]}
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="process-levels-") as tmp:
        for i in range(args.runs):
            order = names if i % 2 == 0 else names[::-1]  # alternate the order as well as the variants
            for name in order:
                lines, env = VARIANTS[name]
                _, med = run_normbench(case + lines, Path(tmp), extra_env=env)
                medians[name].append(next(iter(med.values())))
            medians["peer"].append(run_peer([(args.norm, 1024, "fwd")], tokens=4096)[1][0])
    for name, values in medians.items():
        print(
            f"{name:<12} "
            + ", ".join(f"{v * 1e6:.0f}" for v in values)
            + f" µs   median {statistics.median(values) * 1e6:.0f}   CV {100 * cv(values):.1f}%"
            + f"   max/min {max(values) / min(values):.3f}"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
