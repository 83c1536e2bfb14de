"""Latency of one norm implementation on a (tokens, d) tensor: forward-only under
torch.inference_mode, or forward+backward (gradients for the input and the parameters, reset before
every call as an optimizer's zero_grad(set_to_none=True) would).

Details: docs/methodology.md, "Latency in depth"."""

from __future__ import annotations

import gc

from normbench.benches._latency.member_rows import RoundSet, member_result
from normbench.benches._latency.placement import DEFAULT_PLACEMENTS, placement_count, rounds_for
from normbench.benches._latency.process import machine_speed_reading, machine_speed_rows
from normbench.benches._latency.round_set import COPY, peers_of, place, prepare, round_seed, timed_only
from normbench.benches._latency.sides import time_sides
from normbench.benches._samples import case_timer
from normbench.benches._tensors import DTYPES, check_device, check_dtype
from normbench.benches.base import TimingBench, register_bench
from normbench.core.params import Param
from normbench.norms import SPEEDUP_REFERENCES, reference_problem
from normbench.norms.inputs import INPUTS, make_input
from normbench.timing import measure_interleaved
from normbench.timing.cpu import DEFAULT_MIN_RUN_S
from normbench.timing.process import keep_allocator_warm, reset_cache_state

MODES = ("fwd", "fwd+bwd")
# The statistic of the raw samples that derived figures (GB/s, fraction of copy, cost over a Linear) and the
# tables use. median: the default, robust to a few disturbed samples. min: the least-disturbed sample, for a
# machine shared with other jobs, where preemption slows a large share of samples (interference only ever
# adds time). Both are stored for every case whatever the choice.
STATS = ("median", "min")
STAT_PARAM = Param(str, "median", choices=STATS, help="statistic of the raw samples behind GB/s and tables")
# full: times, accuracy, peak memory and the copy probe. fast: times only (overrides copy_probe,
# accuracy_rows and memory), for users who want a table quickly; the report labels these cases.
PRESETS = ("full", "fast")


@register_bench
class Latency(TimingBench):
    kind = "latency"
    description = (
        "time per call, GB/s, fraction of a copy, error vs fp64 and peak memory, per norm implementation"
    )
    # tensor/eager: accuracy rows (_latency/accuracy.py); method: how peak_mem was measured; timer: time rows;
    # policy: the allocator policy the allocator_warm row names (benches/_latency/process.py).
    # pages: the process's page state behind huge_page_share (timing/pages.py).
    # reference: what a time_vs_ref / time_vs_copy row is a ratio to; round_set: the case id of the case
    # whose paired rounds timed this one (the cases of one round set are paired with each other);
    # process: which of the case's k fresh processes a per-process row (raw samples, <metric>_process) is from.
    labels = {
        "tensor": str,
        "eager": str,
        "method": str,
        "timer": str,
        "policy": str,
        "pages": str,
        "reference": str,
        "round_set": str,
        "process": int,  # the fresh process a per-process row came from (benches/_processes.py)
    }
    params = {
        "tokens": Param(int, minimum=1, help="rows of the input (batch x sequence)"),
        "d": Param(int, minimum=1, help="normalized dimension"),
        "dtype": Param(str, "fp32", choices=tuple(DTYPES)),
        "mode": Param(
            str, "fwd", choices=MODES, help="fwd = inference_mode forward; fwd+bwd = forward and backward"
        ),
        "device": Param(str, "cpu", choices=("cpu", "cuda")),
        "cache": Param(
            str,
            "warm",
            choices=("warm", "cold"),
            help="cold = flush the LLC (CPU) or L2 (GPU) before every sample, one call per sample",
        ),
        "cuda_graph": Param(bool, False, help="CUDA only: time graph replays, flush cost subtracted"),
        "input": Param(str, "normal", choices=INPUTS, help="input distribution (see benches/_tensors.py)"),
        "eps": Param(float, 1e-5, exclusive_minimum=0.0),
        # 30 rounds: the 95% interval of a median of per-round ratios spans the 10th to 21st of 30
        # (timing/paired.py); the run floor min_run_s keeps the whole timing at the same length as 15
        # longer samples did, so more rounds cost little
        "samples": Param(int, 30, minimum=3, help="paired rounds, one timed sample of each member per round"),
        "warmup_calls": Param(int, 3, minimum=0, help="untimed calls before calibration"),
        "min_sample_s": Param(
            float,
            2e-3,
            exclusive_minimum=0.0,
            help="each sample's inner loop lasts at least this (warm cache)",
        ),
        "min_run_s": Param(
            float,
            DEFAULT_MIN_RUN_S,
            minimum=0.0,
            help="the samples together last at least this (warm cache; CPU): see timing/cpu.py",
        ),
        "seed": Param(int, 0),
        "placements": Param(
            int,
            DEFAULT_PLACEMENTS,
            minimum=1,
            help="copies of the case's tensors its rounds cycle through (CPU): see benches/_latency/placement.py",
        ),
        "copy_probe": Param(bool, True, help="also time identity.copy on the same tensor"),
        "reference": Param(
            str,
            SPEEDUP_REFERENCES[0],
            check=reference_problem,
            help="the implementation every case is timed against in the same rounds (time_vs_ref)",
            hashed_at_default=False,
        ),
        "pairing": Param(
            str,
            "shape",
            choices=("shape", "case"),
            help="shape = every implementation at the same parameters in one set of rounds; case = each "
            "case with its reference and the copy probe only",
            hashed_at_default=False,
        ),
        # 512 rows: the check's cost floor, where its verdict no longer moves (docs/methodology.md, "Fast preset").
        "accuracy_rows": Param(int, 512, minimum=0, help="compare the first N rows with float64 (0 = off)"),
        "memory": Param(bool, True, help="measure the peak memory of one call"),
        "stat": STAT_PARAM,
        "preset": Param(
            str, "full", choices=PRESETS, help="fast = times only: no accuracy, memory or copy probe"
        ),
    }

    def check_case(self, params, norm, impl):
        if params.get("cuda_graph") and params.get("device") != "cuda":
            return [("cuda_graph", 'CUDA graphs need device = "cuda"')]
        return []

    def run_case(self, case, ctx):
        """Time the case in one round set with its reference, the copy probe and (pairing = "shape") the
        later cases at the same parameters (benches/_latency/round_set.py); their results go to ctx.ready."""
        import torch

        p = effective_params(case.params)
        keep_allocator_warm()  # before the case allocates anything, so all of it lives under one policy
        check_device(p["device"])
        dtype = getattr(torch, DTYPES[p["dtype"]])
        check_dtype(dtype, p["device"])
        x = make_input(
            p["input"], p["tokens"], p["d"], dtype=dtype, device=p["device"], seed=p["seed"], eps=p["eps"]
        )

        def grad_context():
            return torch.inference_mode(p["mode"] == "fwd")

        owner = prepare(case, p, x, [x], grad_context, ctx.memo)  # its failure is the case's own
        k = placement_count(p, x, owner.steps[0])
        copies = [x] + [x.detach().clone() for _ in range(k - 1)]
        owner.steps = place(owner, copies, p)
        members = [owner]
        for peer in peers_of(case, ctx, p, x):
            try:
                members.append(prepare(peer, p, x, copies, grad_context, ctx.memo))
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # that case's own outcome, recorded at its turn
                ctx.ready[peer.case_id] = exc
        labels = {m.label for m in members}
        reference = p["reference"]
        if reference not in labels:
            try:
                members.append(timed_only(reference, p, x, copies, grad_context))
            except Exception:  # unavailable or unsupported here: the cases go without time_vs_ref
                reference = None
        copy = COPY if p["copy_probe"] else None
        if copy and copy not in labels:
            members.append(timed_only(COPY, p, x, copies, grad_context))
        timer = case_timer(p)
        # A defined state before timing: the accuracy checks' temporaries are freed by reference counting as
        # they return (their memory stays with the allocator, see timing/process.py); a young-generation
        # collection frees recent reference cycles (a full one would cost ~0.25 s once torch is imported,
        # and the timer keeps the collector off while it times). Then a defined cache state: what earlier
        # work left in the last-level cache is replaced by the same flush every case sees (timing/process.py).
        gc.collect(1)
        reset = reset_cache_state(p["device"], p["cache"])
        canary_before = machine_speed_reading(p)  # the machine's own speed, just before and just after
        seed = round_seed(case)
        with grad_context():
            measured = measure_interleaved(
                timer,
                {m.label: m.steps for m in members},
                rounds_for(p, k),
                seed=seed,
            )
        speed = machine_speed_rows(canary_before, machine_speed_reading(p))
        shared = RoundSet(
            p,
            x,
            copies,
            members,
            measured,
            reference,
            copy,
            timer,
            reset,
            speed,
            case.case_id,
            seed,
            ctx.threads,
            ctx.memo,
            grad_context,
        )
        own: BaseException | None = None
        result = None
        for m in members:
            if m.case is None:
                continue
            try:
                outcome = member_result(m, shared)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                outcome = exc
            if m is owner:
                result, own = (None, outcome) if isinstance(outcome, BaseException) else (outcome, None)
            else:
                ctx.ready[m.case.case_id] = outcome
        if own is not None:
            raise own
        return result

    def time_sides(self, case, norms, seed):
        return time_sides(case, norms, seed, DTYPES)

    def headline(self, frame, opts):
        from normbench.benches._latency.headline import latency_headline

        return latency_headline(frame, opts)

    def report(self, frame, opts):
        from normbench.benches._latency.report import latency_tables

        return latency_tables(frame, opts)


def effective_params(params: dict) -> dict:
    """The case's parameters with its preset applied: `fast` turns off accuracy, memory and the copy probe
    (and the huge-page and machine-speed rows, which read them from the process beside the timing)."""
    p = dict(params)
    if p.get("preset") == "fast":
        p.update(copy_probe=False, accuracy_rows=0, memory=False)
    return p
