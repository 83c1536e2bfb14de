"""Latency of one norm implementation on a (tokens, hidden) tensor: forward-only under
torch.inference_mode, or forward+backward (gradients for the input and the parameters, reset before
every call as an optimizer's zero_grad(set_to_none=True) would).

Each case stores, besides the raw time samples:
  * GB/s from the norm's byte model, and the copy probe (identity.copy on the same tensor, same mode,
    timer and cache state, timed in alternation with the norm, so both see the same machine load):
    `copy_fraction` says how close the norm comes to the bandwidth this machine delivers; above 1 it is
    implausible (a byte model or timing error), flagged in the report; on a GPU the vendor's nominal peak
    is shown beside it, labelled nominal. The probe depends only on (tokens, hidden, dtype, device, cache,
    mode, graph) and the timer's settings, not on the norm: the first case of a process with that key
    times it, later cases reuse it (`copy_reused` = 1, label `copy_from` = the case that timed it) instead
    of timing it again (as long as the norm); `copy_reuse = false` times it in every case. The norm is timed
    in the same rounds either way, so reuse never changes the norm's own protocol;
  * accuracy against a float64 reference of the same norm (benches/_latency/accuracy.py), re-checked after the
    timing loop;
  * the first call's time (the compile time of torch.compile'd implementations, never part of latency);
  * the peak memory one call allocates (benches/_memory.py);
  * the process state behind the time (timing/process.py): minor page faults per timed call of the norm
    and of the copy probe and the samples that took any, `faulted` when a quarter of either's samples did, whether the allocator
    policy was in force, and `resident_extra_bytes`, what the harness keeps alive beside the case's own
    tensors while it times (the outputs kept for the re-check, the memoised float64 references, the copy
    probe's gradient tensors, the cold-cache flush buffer, the canary's tensor);
  * the machine's speed while the case was timed (CPU, not under preset fast; timing/canary.py): a fixed
    canary kernel timed just before and just after the timed section, `canary_time` the slower reading and
    `machine_slowdown` that over the fastest reading of the process (>= 1; flagged in the report from 1.10).

Preset `fast` times only: no accuracy check, peak memory, copy probe or canary (the report labels such
cases).
An implementation that raises for the case's dtype or device (torch's "... not implemented for 'Half'",
"Could not run ... with arguments from the 'X' backend") is `skipped` with the reason; any other
exception, a NotImplementedError of its own included, is `failed`.
"""

from __future__ import annotations

from normbench.benches._latency.accuracy import measure_accuracy, recheck, recheck_stateful, run_outputs
from normbench.benches._latency.copy_probe import bandwidth_rows, copy_probe_key, copy_step
from normbench.benches._latency.first_call import first_call
from normbench.benches._latency.placement import DEFAULT_PLACEMENTS
from normbench.benches._latency.process import (
    machine_speed_reading,
    machine_speed_rows,
    page_rows,
    process_rows,
    resident_extra_bytes,
)
from normbench.benches._memory import peak_memory_row
from normbench.benches._samples import sample_stat, timing_rows
from normbench.benches._tensors import check_device, check_dtype, make_step
from normbench.benches.base import Bench, CaseResult, register_bench
from normbench.core.errors import UnavailableCase
from normbench.core.params import Param
from normbench.norms import get_norm
from normbench.norms._inputs import INPUTS
from normbench.timing import measure_interleaved, timer_for
from normbench.timing.cpu import DEFAULT_MIN_RUN_S
from normbench.timing.process import keep_allocator_warm, reset_cache_state

DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "fp64": "float64"}
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
class Latency(Bench):
    kind = "latency"
    exclusive_node = True  # a timing bench: alone on its node under --executor ray
    description = (
        "time per call, GB/s, fraction of a copy, error vs fp64 and peak memory, per norm implementation"
    )
    compare_metrics = {"time": "lower"}
    compare_pool = ()
    # tensor/eager: accuracy rows (_latency/accuracy.py); method: how peak_mem was measured; timer: time rows;
    # policy: the allocator policy the allocator_warm row names (benches/_latency/process.py).
    # copy_from: the case whose copy probe a case reuses (see copy_reuse).
    # pages: the process's page state behind huge_page_share (timing/pages.py).
    labels = {
        "tensor": str,
        "eager": str,
        "method": str,
        "timer": str,
        "policy": str,
        "copy_from": str,
        "pages": str,
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
        "samples": Param(int, 15, minimum=3, help="timed samples kept raw"),
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
        "copy_reuse": Param(
            bool,
            True,
            help="reuse the copy probe an earlier case of this process timed at the same shape, dtype, "
            "device, cache, mode and timer settings",
        ),
        # 512 rows: the check's cost floor. Its verdict is a ratio to eager's error on the same rows, and
        # the max error grows only with the log of the elements compared: LayerNorm, RMSNorm, BatchNorm
        # eval and two other implementations at hidden 512/2048, fwd and fwd+bwd, read the same err_ratio
        # (1.00) at 256, 512, 1024 and 4096 rows, and err_abs at 512 rows within 30% of 4096's, while
        # 4096 rows cost 0.4-4 s per case at hidden 2048 (an fp64 autograd reference of 32-64 MiB
        # tensors) and 512 rows 25-100 ms (2-core EPYC VM, loaded; docs/methodology.md).
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
        import gc

        import torch

        from normbench.benches._latency.placement import placement_count, placement_rows, rounds_for
        from normbench.norms._inputs import make_input

        p = effective_params(case.params)
        keep_allocator_warm()  # before the case allocates anything, so all of it lives under one policy
        check_device(p["device"])
        norm = get_norm(case.norm)
        if missing := norm.impls[case.impl].missing_requirement():
            raise UnavailableCase(missing)
        dtype = getattr(torch, DTYPES[p["dtype"]])
        check_dtype(dtype, p["device"])
        x = make_input(
            p["input"],
            p["tokens"],
            p["d"],
            dtype=dtype,
            device=p["device"],
            seed=p["seed"],
            eps=p["eps"],
        )

        def grad_context():
            return torch.inference_mode(p["mode"] == "fwd")

        built, step, check, rows = first_call(norm, case.impl, p, x, grad_context)
        acc = measure_accuracy(norm, case.impl, built, x, p, ctx.memo) if p["accuracy_rows"] else None
        timer = timer_for(
            p["device"],
            cache=p["cache"],
            graph=p["cuda_graph"],
            warmup=p["warmup_calls"],
            samples=p["samples"],
            min_sample_s=p["min_sample_s"],
            min_run_s=p["min_run_s"],
        )
        # Rounds alternate the norm with its copy probe and cycle through the placements (copies of the
        # case's tensors at other addresses, _latency/placement.py). Graph mode captures new graphs at every
        # round: one round and one placement there.
        k = placement_count(p, x, step)
        rounds = rounds_for(p, k)
        copies = [x] + [x.detach().clone() for _ in range(k - 1)]
        dy = getattr(step, "dy", None)  # fwd+bwd: every copy's upstream gradient has the same values
        steps = [step] + [make_step(built, xi, p["mode"], dy=dy)[0] for xi in copies[1:]]
        fns = {"norm": steps}
        probe_key = copy_probe_key(p, ctx.threads)
        reused = ctx.memo.get(probe_key) if p["copy_probe"] and p["copy_reuse"] else None
        if p["copy_probe"] and reused is None:
            fns["copy"] = [copy_step(xi, p["mode"], dy=dy) for xi in copies]
        # A defined state before timing: the accuracy check's temporaries are freed by reference counting as
        # it returns (their memory stays with the allocator, see timing/process.py); a young-generation
        # collection frees recent reference cycles. A full collection would cost ~0.25 s per case once torch
        # is imported, and the timer keeps the collector off while it times.
        gc.collect(1)
        # ... and a defined cache state: what the previous case or the accuracy check left in the last-level
        # cache (dirty float64 lines included) is replaced by the same flush every case sees, then the warm-up
        # brings in the case's own working set (timing/process.py, "cache").
        reset = reset_cache_state(p["device"], p["cache"])
        canary_before = machine_speed_reading(p)  # the machine's own speed, just before and just after
        extra_bytes = resident_extra_bytes(
            acc, fns.get("copy"), timer, ctx.memo, reset, placed=(copies[1:], steps[1:])
        )
        with grad_context():
            measured = measure_interleaved(timer, fns, rounds)
        rows += machine_speed_rows(canary_before, machine_speed_reading(p))
        samples = measured["norm"]
        if "copy" in measured:
            ctx.memo[probe_key] = (measured["copy"], case.case_id)
        copy_samples, copy_from = measured.get("copy"), None
        if reused is not None:
            copy_samples, copy_from = reused
        check("after timing")  # a kernel that corrupts its output under repetition is caught here
        t = sample_stat(samples.times, p["stat"])
        if t <= 0:
            raise RuntimeError(f"{p['stat']} time {t:.3g} s: the flush's cost swamps the call (graph mode)")
        if acc is not None:
            impl_cmp, acc_rows, (xa, dya) = acc
            if norm.stateful:  # its output moves with its state: re-judged against the reference instead
                err = recheck_stateful(norm, case.impl, built, impl_cmp, xa, dya, p)
                rows += acc_rows + [{"metric": "recheck_err_abs", "unit": "abs", "value": err}]
            else:
                change = recheck(impl_cmp, run_outputs(norm, built, xa, dya, p["mode"]))
                rows += acc_rows + [{"metric": "recheck_max_change", "unit": "abs", "value": change}]

        rows += timing_rows("time", samples)
        if p["device"] == "cpu" and p.get("preset") != "fast":  # fast: times only (smaps costs ~12 ms a case)
            # one more call: its output and gradients sit where the timed calls' did
            with grad_context():
                output = step()
            grads = [t.grad for t in (*step.own_tensors, *built.params) if t.grad is not None]
            rows += page_rows(p["device"], x, list(built.params), step.own_tensors, grads, output)
        rows += placement_rows(samples, k)
        rows += bandwidth_rows(norm, case.impl, x, p, t, copy_samples)
        if p["copy_probe"]:
            rows.append({"metric": "copy_reused", "unit": "bool", "value": float(copy_from is not None)})
        rows += process_rows(measured, extra_bytes)
        rows.append({"metric": "cache_reset", "unit": "bool", "value": float(reset is not None)})
        rows += [
            {"metric": k, "unit": "MHz", "value": v} for k, v in samples.extra.items() if k.endswith("_mhz")
        ]
        rows += [
            {"metric": "inner_loops", "unit": "calls", "value": float(samples.inner)},
            {"metric": "threads", "unit": "threads", "value": float(ctx.threads)},
        ]
        if p["memory"]:
            rows.append(peak_memory_row(step, p["device"], grad_context))
        for row in rows:
            row.setdefault("timer", samples.timer)
            if p["copy_probe"] and (row["metric"].startswith("copy_") or row["metric"] == "above_copy"):
                row.setdefault("copy_from", copy_from or case.case_id)
        return CaseResult(rows)

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
