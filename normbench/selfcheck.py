"""`normbench selfcheck`: can this machine's numbers be trusted? A few ops are timed with normbench's
CpuTimer and with torch.utils.benchmark.Timer.blocked_autorange, alternating in one process, in fresh
processes that take the ops in forward and in reversed order.

Details: docs/methodology.md, "Measuring honestly"."""

from __future__ import annotations

import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from normbench.core.errors import NormbenchError
from normbench.norms import all_norms, get_norm
from normbench.norms.inputs import make_input, perturb_params
from normbench.timing.cpu import DEFAULT_MIN_RUN_S, CpuTimer
from normbench.timing.fresh import run_fresh, write_line
from normbench.timing.pages import apply_state, chosen_state, clear_state, default_state
from normbench.timing.process import FAULT_SAMPLES_FLAG

# (norm, impl, tokens, d): LayerNorm small and large, RMSNorm at the two shapes that read levels in fresh processes, a copy.
DEFAULT_OPS = (
    ("layernorm", "module", 512, 256),
    ("layernorm", "module", 4096, 1024),
    ("rmsnorm", "module", 4096, 1024),
    ("rmsnorm", "module", 2048, 2048),
    ("identity", "copy", 4096, 1024),
)
AGREE_WITHIN = 0.05  # the goal of selfcheck: within 5% of torch.utils.benchmark, in either order


@dataclass(frozen=True)
class Op:
    norm: str
    impl: str
    tokens: int
    d: int

    @property
    def label(self) -> str:
        return f"{self.norm}:{self.impl} {self.tokens}x{self.d}"


def page_state(option: str | None) -> str:
    """The measuring processes' page state: --pages, else as `normbench run` chooses (timing/pages.py)."""
    return chosen_state(option)


def check_ops(ops: list[Op]) -> None:
    """Every op names a registered norm implementation (NormbenchError otherwise), before any process starts."""
    norms = all_norms()
    for o in ops:
        if o.norm not in norms or o.impl not in norms[o.norm].impls:
            raise NormbenchError(
                f"--op {o.norm}:{o.impl}: no such norm implementation (see `normbench list`)"
            )


def parse_op(text: str) -> Op:
    """'norm:impl:TOKENSxD', e.g. 'rmsnorm:module:4096x1024'."""
    try:
        norm, impl, shape = text.split(":")
        tokens, d = (int(v) for v in shape.lower().split("x"))
    except ValueError:
        raise ValueError(
            f"--op {text!r}: expected norm:impl:TOKENSxD, e.g. rmsnorm:module:4096x1024"
        ) from None
    return Op(norm, impl, tokens, d)


def build_call(op: Op):
    """A zero-argument call of the op's forward on a seeded fp32 input, under inference_mode."""
    import torch

    x = make_input("normal", op.tokens, op.d, dtype=torch.float32, device="cpu", seed=0)
    built = get_norm(op.norm).build(op.impl, op.d, eps=1e-5, dtype=torch.float32, device="cpu")
    perturb_params(built, 0)
    fn = built.fn

    def call():
        with torch.inference_mode():
            return fn(x)

    return call


def time_op(call, *, pairs: int, samples: int, min_run_time: float, threads: int) -> dict:
    """Alternate `pairs` times: normbench's CpuTimer (median of `samples` samples), then
    torch.utils.benchmark.Timer.blocked_autorange (its median). Returns both lists of medians and
    normbench's page faults per timed call."""
    from torch.utils.benchmark import Timer

    ours, theirs, faults, calls, fault_samples, n = [], [], 0, 0, 0, 0
    timer = Timer("call()", globals={"call": call}, num_threads=threads)
    for _ in range(pairs):
        s = CpuTimer(samples=samples, min_run_s=DEFAULT_MIN_RUN_S).measure(call)
        ours.append(statistics.median(s.times))
        faults += s.extra["minor_faults"]
        calls += s.extra["timed_calls"]
        fault_samples += s.extra["fault_samples"]
        n += len(s.times)
        theirs.append(timer.blocked_autorange(min_run_time=min_run_time).median)
    return {
        "normbench": ours,
        "torch": theirs,
        "faults_per_call": faults / max(1, calls),
        "fault_share": fault_samples / max(1, n),
    }


def measure_plain(ops: list[Op], *, pairs: int, min_run_time: float, threads: int) -> dict:
    """In this (plain) process: label -> {"torch": median of `pairs` blocked_autorange medians}."""
    import torch
    from torch.utils.benchmark import Timer

    torch.set_num_threads(threads)
    out = {}
    for op in ops:
        call = build_call(op)
        timer = Timer("call()", globals={"call": call}, num_threads=threads)
        medians = [timer.blocked_autorange(min_run_time=min_run_time).median for _ in range(pairs)]
        out[op.label] = {"torch": statistics.median(medians)}
        del call
    return out


def measure_ops(
    ops: list[Op], *, pairs: int = 2, samples: int = 15, min_run_time: float = 0.2, threads: int = 1
) -> dict:
    """In this process, each op in the given order: label -> time_op's result (medians in seconds)."""
    import torch

    torch.set_num_threads(threads)
    out = {}
    for op in ops:
        call = build_call(op)
        r = time_op(call, pairs=pairs, samples=samples, min_run_time=min_run_time, threads=threads)
        out[op.label] = {
            "normbench": statistics.median(r["normbench"]),
            "torch": statistics.median(r["torch"]),
            "faults_per_call": r["faults_per_call"],
            "fault_share": r["fault_share"],
        }
        del call
    return out


def run_processes(
    ops: list[Op],
    *,
    runs: int,
    threads: int,
    pairs: int,
    samples: int,
    min_run_time: float,
    env=None,
    say=None,
    pages: str | None = None,
    plain: bool = False,
) -> list[dict]:
    """2 x runs fresh processes, alternating forward and reversed op order; each returns measure_ops's
    result, under the page state `pages` (default: timing/pages.py's). plain=True: the plain peer
    instead (measure_plain, no policy, the kernel's default pages). Returns [{"order": "forward"|"reversed",
    "results": {...}}, ...]."""
    spec = {
        "ops": [op.__dict__ for op in ops],
        "threads": threads,
        "pairs": pairs,
        "samples": samples,
        "min_run_time": min_run_time,
        "pages": None if plain else (pages or default_state()),
        "plain": plain,
    }
    out = []
    for i in range(2 * runs):
        order = "forward" if i % 2 == 0 else "reversed"
        child = dict(spec, ops=spec["ops"] if order == "forward" else spec["ops"][::-1])
        if say:
            say(f"{'plain peer ' if plain else ''}process {i + 1}/{2 * runs}: {order} order")
        done = run_fresh("normbench.selfcheck", child, env=env)
        if done.died or not done.lines:
            raise RuntimeError(f"selfcheck process failed: {done.reason}")
        out.append({"order": order, "results": done.lines[-1]})
    return out


def cv(values: list[float]) -> float:
    """Coefficient of variation (sample standard deviation / mean); 0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean if mean else float("nan")


def summarize(processes: list[dict], plain: list[dict] | None = None) -> list[dict]:
    """Per op: agreement (normbench/torch, median over processes), worst agreement, order ratio
    (forward/reversed medians of normbench), each timer's CV across processes, the largest page faults
    per call; with `plain` (run_processes(plain=True)) the plain peer's median and CV and
    state_cost = plain peer / same-state peer."""
    labels = list(processes[0]["results"])
    rows = []
    for label in labels:
        if plain:
            peer = [p["results"][label]["torch"] for p in plain]
            same = statistics.median(p["results"][label]["torch"] for p in processes)
            plain_row = {
                "torch_plain_s": statistics.median(peer),
                "cv_torch_plain": cv(peer),
                "state_cost": statistics.median(peer) / same,
            }
        else:
            plain_row = {}
        per = [p["results"][label] for p in processes]
        ratios = [r["normbench"] / r["torch"] for r in per]
        fwd = [p["results"][label]["normbench"] for p in processes if p["order"] == "forward"]
        rev = [p["results"][label]["normbench"] for p in processes if p["order"] == "reversed"]
        rows.append(
            {
                "op": label,
                "normbench_s": statistics.median(r["normbench"] for r in per),
                "torch_s": statistics.median(r["torch"] for r in per),
                "agreement": statistics.median(ratios),
                "worst_agreement": max(ratios, key=lambda r: abs(r - 1)),
                "order_ratio": statistics.median(fwd) / statistics.median(rev)
                if fwd and rev
                else float("nan"),
                "cv_normbench": cv([r["normbench"] for r in per]),
                "cv_torch": cv([r["torch"] for r in per]),
                "faults_per_call": max(r["faults_per_call"] for r in per),
                "fault_share": max(r.get("fault_share", 0.0) for r in per),
                **plain_row,
            }
        )
    return rows


def verdict(row: dict, within: float = AGREE_WITHIN) -> str:
    """'ok' when normbench agrees with torch.utils.benchmark in every process and the order moves it
    less than `within`; otherwise what is off."""
    problems = []
    if abs(row["worst_agreement"] - 1) > within:
        problems.append("disagrees")
    if abs(row["order_ratio"] - 1) > within:
        problems.append("order-dependent")
    # run-to-run: a spread beyond `within` that is also clearly (25%) above torch's in the same processes;
    # with a handful of processes a CV is itself uncertain by about that much
    if row["cv_normbench"] > max(within, 1.25 * row["cv_torch"]):
        problems.append("spread")
    if row.get("fault_share", 0.0) >= FAULT_SAMPLES_FLAG:
        problems.append("faults")
    return ", ".join(problems) or "ok"


def _child(plan_path: str, out_path: str) -> None:
    spec = json.loads(Path(plan_path).read_text())
    ops = [Op(**o) for o in spec["ops"]]
    if spec.get("plain"):  # what a user's own script gets: whatever the kernel gives a process
        clear_state()
        kw = {k: spec[k] for k in ("pairs", "min_run_time", "threads")}
        result = measure_plain(ops, **kw)
    else:
        if spec.get("pages"):  # before torch starts: its allocator reads the state at its first allocation
            apply_state(spec["pages"])
        result = measure_ops(
            ops,
            pairs=spec["pairs"],
            samples=spec["samples"],
            min_run_time=spec["min_run_time"],
            threads=spec["threads"],
        )
    with open(out_path, "w") as out:
        write_line(out, result)


if __name__ == "__main__":
    _child(*sys.argv[1:3])
