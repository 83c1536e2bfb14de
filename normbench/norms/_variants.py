"""Helpers the norm files share for their non-eager implementations: torch.compile'd functions, and
optional third-party modules (Apex, Liger-Kernel) that run on CUDA only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from normbench.core.errors import SkipCase
from normbench.norms.registry import Built

_compiled: dict[Callable, Callable] = {}


def compiled(fn: Callable) -> Callable:
    """torch.compile(fn), made once per process. Dynamo caches compiled graphs per code object and guard
    set (shape, dtype, device, grad mode), so cases that repeat a shape reuse the graph and only the
    first pays the compile (the bench records that first call as `compile_s`). fullgraph=True: a graph
    break raises instead of silently timing eager code."""
    import torch

    if fn not in _compiled:
        _allow_many_recompiles()
        _compiled[fn] = torch.compile(fn, fullgraph=True, dynamic=False)
    return _compiled[fn]


def _allow_many_recompiles() -> None:
    """A sweep compiles one graph per shape and dtype. Past dynamo's recompile limit (8 per function by
    default) it would fall back to eager without a word, and eager times would be stored as compiled
    ones; raise the limit, and make hitting it an error."""
    import torch._dynamo.config as cfg

    for name in (
        "recompile_limit",
        "cache_size_limit",
        "accumulated_recompile_limit",
        "accumulated_cache_size_limit",
    ):
        if hasattr(cfg, name):
            setattr(cfg, name, max(getattr(cfg, name), 4096))
    for name in ("fail_on_recompile_limit_hit", "fail_on_cache_limit_hit"):
        if hasattr(cfg, name):
            setattr(cfg, name, True)


class CompiledCall:
    """x -> compiled(fn)(x, *args): the parameters are arguments of the compiled graph, not constants
    baked into it, so every case's fresh parameters reuse one graph per shape."""

    is_compiled = True

    def __init__(self, fn: Callable, *args: Any):
        self.fn = compiled(fn)
        self.args = args

    def __call__(self, x):
        return self.fn(x, *self.args)


def compiled_built(fn: Callable, params: list, *args: Any, module: Any = None) -> Built:
    """A Built whose call is compiled(fn)(x, *args); `params` receive gradients in fwd+bwd."""
    return Built(CompiledCall(fn, *args), params, module)


def third_party(factory: Callable[[], Any], what: str, *, dtype, device) -> Built:
    """A third-party nn.Module moved to device and dtype. Apex's and Liger's kernels are CUDA (Triton)
    only: on another device the case is skipped, with the reason, rather than failed."""
    import torch

    if torch.device(device).type != "cuda":
        raise SkipCase(f"{what} runs on CUDA only")
    return Built.of(factory().to(device=device, dtype=dtype))


def ones_zeros(d: int, *, dtype, device, bias: bool = True) -> list:
    """Fresh gain (ones) and, when asked, bias (zeros) that receive gradients, as nn.LayerNorm's init."""
    import torch

    w = torch.ones(d, dtype=dtype, device=device, requires_grad=True)
    if not bias:
        return [w]
    return [w, torch.zeros(d, dtype=dtype, device=device, requires_grad=True)]
