"""The inference-cost question: Linear(d -> d) followed by a norm, at inference (torch.inference_mode): how
much do LN's per-call statistics cost when BN can be folded away? The `block` choices come from the norm
registry (benches/_block/names.py); what is timed and checked: docs/methodology.md, "The block bench"."""

from __future__ import annotations

from normbench.benches._block.names import BLOCKS, norm_of
from normbench.benches._memory import peak_memory_row
from normbench.benches._samples import case_timer, ratio_rows, sample_stat, timing_rows
from normbench.benches._tensors import DTYPES, check_device, check_dtype, copy_step
from normbench.benches.base import CaseResult, TimingBench, register_bench
from normbench.benches.latency import STAT_PARAM
from normbench.core.params import Param
from normbench.norms import get_norm
from normbench.norms.inputs import make_input, perturb_params
from normbench.timing import measure_interleaved
from normbench.timing.paired import paired_ratios


@register_bench
class Block(TimingBench):
    kind = "block"
    description = (
        "inference time of Linear(d->d) + norm, BatchNorm folded into the Linear, or the Linear alone"
    )
    uses_norms = False
    # compare: the block's time over the Linear's and over a copy of its input; the Linear alone, the
    # reference, has its copy ratio
    # tensor: the folded-vs-unfolded error row; method: how peak_mem was measured; timer: time rows;
    # reference: what time_vs_ref is a ratio to (the Linear alone); process: see benches/latency.py.
    labels = {"tensor": str, "method": str, "timer": str, "reference": str, "process": int}
    params = {
        "block": Param(str, choices=BLOCKS, help="what follows the Linear (see benches/block.py)"),
        "tokens": Param(int, minimum=1, help="rows of the input"),
        "d": Param(int, minimum=1, help="width: the Linear is d x d, the norm normalizes d"),
        "dtype": Param(str, "fp32", choices=tuple(DTYPES)),
        "device": Param(str, "cpu", choices=("cpu", "cuda")),
        "cache": Param(str, "warm", choices=("warm", "cold")),
        "eps": Param(float, 1e-5, exclusive_minimum=0.0),
        "samples": Param(int, 30, minimum=3, help="paired rounds of the block, the Linear alone and a copy"),
        "warmup_calls": Param(int, 3, minimum=0),
        "min_sample_s": Param(float, 2e-3, exclusive_minimum=0.0),
        "seed": Param(int, 0),
        "stat": STAT_PARAM,
    }

    def run_case(self, case, ctx):
        import torch

        p = case.params
        check_device(p["device"])
        dtype = getattr(torch, DTYPES[p["dtype"]])
        check_dtype(dtype, p["device"])
        x = make_input("normal", p["tokens"], p["d"], dtype=dtype, device=p["device"], seed=p["seed"])
        linear, norm, built = build_block(p, dtype)
        folded = p["block"] != "linear" and norm_of(p["block"])[1]
        fn = folded_fn(linear, norm, built, p["eps"]) if folded else unfolded_fn(linear, built)
        rows = []
        with torch.inference_mode():
            y = fn(x)
            ref = exact_block(x, linear, norm, built, p)
            if ref is not None:  # a norm without a float64 reference gets no error row (the report says so)
                err = float((y.double() - ref).abs().max())
                floor = torch.finfo(dtype).eps * float(ref.abs().max()) / 4
                rows.append({"metric": "err_abs", "unit": "abs", "value": err, "tensor": "y"})
            if folded:
                rows += check_fold(x, y, ref, unfolded_fn(linear, built), floor)
            timer = case_timer(p)
            fns = {"block": lambda: fn(x), "copy": copy_step(x, "fwd")}  # latency's copy probe
            if p["block"] != "linear":
                fns["linear"] = lambda: linear(x)
            # one sample of each per round, the order shuffled with a seed from the case id (recorded)
            seed = int(case.case_id[:8], 16)
            measured = measure_interleaved(timer, fns, rounds=p["samples"], seed=seed)
            samples = measured["block"]
            linear_samples = measured.get("linear", samples)
        rows += timing_rows("time", samples)
        rows.append({"metric": "round_seed", "unit": "seed", "value": float(seed)})
        if p["block"] != "linear":
            rows += ratio_rows("time_vs_ref", paired_ratios(samples, linear_samples), reference="linear")
        rows += ratio_rows("time_vs_copy", paired_ratios(samples, measured["copy"]), reference="copy")
        t, linear_t = sample_stat(samples.times, p["stat"]), sample_stat(linear_samples.times, p["stat"])
        rows += [
            {
                "metric": "linear_time_median",
                "unit": "s",
                "value": sample_stat(linear_samples.times, "median"),
            },
            {"metric": "linear_time_min", "unit": "s", "value": min(linear_samples.times)},
            {"metric": "over_linear", "unit": "ratio", "value": t / linear_t - 1},
        ]
        flops = 2 * p["tokens"] * p["d"] ** 2
        rows.append({"metric": "linear_gflops", "unit": "GFLOP/s", "value": flops / linear_t / 1e9})
        rows.append(peak_memory_row(lambda: fn(x), p["device"], torch.inference_mode))
        for row in rows:
            row.setdefault("timer", samples.timer)
        return CaseResult(rows)

    def case_norms(self, case):
        return set() if case.params["block"] == "linear" else {norm_of(case.params["block"])[0]}

    def time_sides(self, case, norms, seed):
        """`normbench ab`: the block with its norm from each side's registry, in the same paired rounds."""
        import torch

        p = case.params
        dtype = getattr(torch, DTYPES[p["dtype"]])
        x = make_input("normal", p["tokens"], p["d"], dtype=dtype, device=p["device"], seed=p["seed"])
        steps = {}
        for side, get in norms.items():
            linear, norm, built = build_block(p, dtype, norms=get)
            folded = p["block"] != "linear" and norm_of(p["block"])[1]
            fn = folded_fn(linear, norm, built, p["eps"]) if folded else unfolded_fn(linear, built)
            steps[side] = lambda fn=fn: fn(x)
        timer = case_timer(p)
        with torch.inference_mode():
            return measure_interleaved(timer, steps, rounds=p["samples"], seed=seed)

    def headline(self, frame, opts):
        from normbench.benches._block.report import block_headline

        return block_headline(frame, opts)

    def report(self, frame, opts):
        from normbench.benches._block.report import block_tables

        return block_tables(frame, opts)


def build_block(p: dict, dtype, norms=get_norm):
    """(Linear, norm or None, Built or None): a seeded Linear and the block's norm module, its parameters
    moved off their init (norms/inputs.py perturb_params) so the affine part is exercised. `norms`: where
    the norm comes from (another commit's registry under `normbench ab`)."""
    import torch
    from torch import nn

    g = torch.Generator().manual_seed(p["seed"] + 101)
    linear = nn.Linear(p["d"], p["d"], dtype=torch.float32)
    with torch.no_grad():  # nn.Linear's default init, from our own generator (no global RNG state touched)
        bound = p["d"] ** -0.5
        linear.weight.uniform_(-bound, bound, generator=g)
        linear.bias.uniform_(-bound, bound, generator=g)
    linear = linear.to(device=p["device"], dtype=dtype).eval()
    if p["block"] == "linear":
        return linear, None, None
    norm = norms(norm_of(p["block"])[0])
    built = norm.build(norm.block_impl, p["d"], eps=p["eps"], dtype=dtype, device=p["device"])
    perturb_params(built, p["seed"])
    if built.module is None:
        raise RuntimeError(f"{norm.name}:{norm.block_impl} built no module for the block")
    built.module.eval()  # inference: running statistics where the norm has any
    return linear, norm, built


def unfolded_fn(linear, built):
    if built is None:
        return linear
    return lambda x: built.fn(linear(x))


def folded_fn(linear, norm, built, eps: float):
    """The norm (at inference) folded into the Linear by the norm's own `fold_into_linear`, in float64,
    rounded once to the dtype."""
    import torch
    import torch.nn.functional as F

    with torch.no_grad():
        w64, b64 = norm.fold_into_linear(built, linear.weight.double(), linear.bias.double(), eps=eps)
        w, b = w64.to(linear.weight.dtype), b64.to(linear.weight.dtype)
    return lambda x: F.linear(x, w, b)


def exact_block(x, linear, norm, built, p):
    """The unfolded block in float64: x W^T + b, then the norm's float64 `exact` at inference (the block
    implementation's semantics); None for a norm without a reference."""
    h = x.double() @ linear.weight.double().T + linear.bias.double()
    if norm is None:
        return h
    if norm.exact is None:
        return None
    params = [t.detach().double() for t in built.params]
    return norm.exact(norm.block_impl, h, params, built, eps=p["eps"])


def check_fold(x, y_folded, ref, unfolded, floor: float) -> list[dict]:
    """Rows for folded vs unfolded; raises when they differ by more than 3 x (unfolded's error vs float64)
    + floor."""
    y_unfolded = unfolded(x).double()
    diff = float((y_folded.double() - y_unfolded).abs().max())
    tolerance = 3 * float((y_unfolded - ref).abs().max()) + floor
    if diff > tolerance:
        raise AssertionError(
            f"the folded block differs from the unfolded one by {diff:.3g} (tolerance {tolerance:.3g})"
        )
    return [
        {"metric": "fold_max_diff", "unit": "abs", "value": diff},
        {"metric": "fold_tolerance", "unit": "abs", "value": tolerance},
    ]
