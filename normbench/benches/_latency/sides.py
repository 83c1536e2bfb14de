"""A latency case's implementation built from several norm registries (the sides of `normbench ab`: the
working tree, a base commit, a second build of the working tree) and timed in the same paired rounds, on
one input tensor, by the bench's own first call and timer."""

from __future__ import annotations

from normbench.benches._latency.first_call import first_call
from normbench.benches._samples import case_timer
from normbench.core.errors import UnavailableCase
from normbench.norms.inputs import make_input
from normbench.timing import measure_interleaved
from normbench.timing.process import keep_allocator_warm, reset_cache_state


def time_sides(case, norms: dict, seed: int, dtypes: dict) -> dict:
    """side -> Samples: `case.impl` of `case.norm` from each side's registry, timed in case.params["samples"]
    rounds, one sample of each per round."""
    import torch

    p = case.params
    keep_allocator_warm()
    dtype = getattr(torch, dtypes[p["dtype"]])
    x = make_input(
        p["input"], p["tokens"], p["d"], dtype=dtype, device=p["device"], seed=p["seed"], eps=p["eps"]
    )

    def grad_context():
        return torch.inference_mode(p["mode"] == "fwd")

    steps = {}
    for side, get_norm in norms.items():
        norm = get_norm(case.norm)
        if missing := norm.impls[case.impl].missing_requirement():
            raise UnavailableCase(missing)
        steps[side] = first_call(norm, case.impl, p, x, grad_context)[1]
    timer = case_timer(p)
    reset_cache_state(p["device"], p["cache"])
    with grad_context():
        rounds = 1 if p["cuda_graph"] else p["samples"]
        return measure_interleaved(timer, steps, rounds, seed=seed)
