"""Which process state moves a CPU latency? Controlled experiments in one process: the same op
timed under two conditions A and B, alternating A, B, A, B, ... so that machine load drifts onto both alike;
each comparison prints the median of the B/A ratios of adjacent pairs and their range. Conditions:

  history    A: nothing before the op's timing; B: a large other case first (LayerNorm 2048x2048 fwd+bwd and
             its float64 accuracy check: tens of MiB allocated, written and freed)
  alignment  A: the input at a 4096-byte boundary; B: 64 bytes past it (the op's own temporaries land where
             the heap puts them either way)
  cache      A: the last-level cache rewritten (the cold-cache flush buffer) before the op's warm-up;
             B: not (whatever the previous step left there)
  placement  8 inputs at different heap addresses, timed round robin: is a slow input slow every round
             (placement) or only now and then (noise)?

Plus a `control`: A and B identical, to read the others against. Every timing is normbench's CpuTimer
(median of 15 samples, default floors) at 1 thread under the allocator policy (timing/process.py).

    python scripts/experiments/process_state.py [--op rmsnorm:2048x512] [--pairs 8] [--only history,cache]
"""

from __future__ import annotations

import argparse
import os
import statistics


def make_op(spec: str):
    import torch

    name, shape = spec.split(":")
    tokens, hidden = (int(v) for v in shape.split("x"))
    module = {"rmsnorm": torch.nn.RMSNorm, "layernorm": torch.nn.LayerNorm}[name](hidden)
    return module, tokens, hidden


def timed(module, x) -> float:
    import torch

    from normbench.timing.cpu import DEFAULT_MIN_RUN_S, CpuTimer

    def call():
        with torch.inference_mode():
            return module(x)

    return statistics.median(CpuTimer(samples=15, min_run_s=DEFAULT_MIN_RUN_S).measure(call).times)


def aligned_input(tokens: int, hidden: int, offset_bytes: int):
    """A (tokens, hidden) fp32 input whose first element sits `offset_bytes` past a 4096-byte boundary."""
    import torch

    base = torch.empty(tokens * hidden + 2048)
    skip = (-base.data_ptr() % 4096 + offset_bytes) // 4
    return base[skip : skip + tokens * hidden].view(tokens, hidden).normal_()


def big_case() -> None:
    from normbench.benches import RunContext, get_bench
    from normbench.runner import run_one
    from normbench.suite.expand import Case

    bench = get_bench("latency")
    p = {k: s.default for k, s in bench.params.items() if not s.required}
    p.update(tokens=2048, d=2048, mode="fwd+bwd", samples=3, copy_probe=False, memory=False)
    run_one(Case("latency", "layernorm", "module", p, 0, "history"), RunContext(threads=1))


def compare(label: str, pairs: int, a, b) -> None:
    """a(), b(): one timing each; alternated `pairs` times."""
    ta, tb = [], []
    for _ in range(pairs):
        ta.append(a())
        tb.append(b())
    ratios = [y / x for x, y in zip(ta, tb, strict=True)]
    print(
        f"{label:<10} A {statistics.median(ta) * 1e6:8.1f} µs   B {statistics.median(tb) * 1e6:8.1f} µs   "
        f"B/A median {statistics.median(ratios):.3f}  range {min(ratios):.3f}-{max(ratios):.3f}"
        f"   (load {os.getloadavg()[0]:.1f})",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--op", default="rmsnorm:2048x512", help="rmsnorm|layernorm:TOKENSxHIDDEN")
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--only", default="control,history,alignment,cache,placement")
    args = ap.parse_args()
    import torch

    from normbench.timing.cache import flush_buffer
    from normbench.timing.process import keep_allocator_warm

    torch.set_num_threads(1)
    keep_allocator_warm()
    module, tokens, hidden = make_op(args.op)
    x = aligned_input(tokens, hidden, 0)
    flush = flush_buffer("cpu")
    print(f"op {args.op}, 1 thread, load average {os.getloadavg()[0]:.1f}")
    todo = args.only.split(",")
    if "control" in todo:
        compare("control", args.pairs, lambda: timed(module, x), lambda: timed(module, x))
    if "history" in todo:
        compare("history", args.pairs, lambda: timed(module, x), lambda: (big_case(), timed(module, x))[1])
    if "alignment" in todo:
        x64 = aligned_input(tokens, hidden, 64)
        compare("alignment", args.pairs, lambda: timed(module, x), lambda: timed(module, x64))
    if "cache" in todo:
        compare("cache", args.pairs, lambda: (flush(), timed(module, x))[1], lambda: timed(module, x))
    if "placement" in todo:
        inputs, keep = [], []
        for i in range(8):
            keep.append(torch.empty(1 + 37_000 * i))  # shift the heap a little between inputs
            inputs.append(torch.randn(tokens, hidden))
        rounds = [[timed(module, xi) for xi in inputs] for _ in range(3)]
        print("placement  per input, 3 rounds (µs); a placement effect repeats across a row:")
        for i, xi in enumerate(inputs):
            row = " ".join(f"{r[i] * 1e6:8.1f}" for r in rounds)
            print(f"  input {i} (address mod 4096 = {xi.data_ptr() % 4096:4d}): {row}")


if __name__ == "__main__":
    main()
