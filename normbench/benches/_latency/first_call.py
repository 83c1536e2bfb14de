"""The first call of a latency case: build the implementation and time its first call, which for a
torch.compile'd implementation is the compilation (`compile_s`, never part of latency)."""

from __future__ import annotations

import sys
import time

from normbench.benches._tensors import make_step, unsupported_here
from normbench.core.errors import SkipCase
from normbench.norms.inputs import perturb_params


def first_call(norm, impl: str, p: dict, x, grad_context):
    """Build the implementation, give its parameters the case's values, and time its first call (for a
    torch.compile'd implementation that call compiles: `compile_s`, kept out of latency). A dtype or
    device the implementation does not support is a skipped case (see unsupported_here); any other
    exception fails the case."""
    import torch

    dtype = x.dtype
    try:
        built = norm.build(impl, p["d"], eps=p["eps"], dtype=dtype, device=p["device"])
        perturb_params(built, p["seed"])
        step, check = make_step(built, x, p["mode"])
        graphs = _dynamo_graphs()
        start = time.perf_counter()
        with grad_context():
            step()
        if p["device"] == "cuda":
            torch.cuda.synchronize()
        first = time.perf_counter() - start
        check("before timing")
    except (NotImplementedError, RuntimeError) as exc:
        if unsupported_here(exc):
            raise SkipCase(f"{p['dtype']} on {p['device']}: {str(exc).splitlines()[0]}") from None
        raise
    rows = [{"metric": "first_call_s", "unit": "s", "value": first}]
    if getattr(built.fn, "is_compiled", False):
        # compile_graphs = 0: dynamo reused a graph an earlier case of this process compiled (same shape,
        # dtype and mode), so compile_s is then only a first call
        rows += [
            {"metric": "compile_s", "unit": "s", "value": first},
            {"metric": "compile_graphs", "unit": "graphs", "value": float(_dynamo_graphs() - graphs)},
        ]
    return built, step, check, rows


def _dynamo_graphs() -> int:
    utils = sys.modules.get("torch._dynamo.utils")
    return int(utils.counters["stats"]["unique_graphs"]) if utils is not None else 0
