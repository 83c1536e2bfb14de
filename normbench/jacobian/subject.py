"""The norm under test, as the Jacobian bench needs it: a function of one input (a row, or a batch for
BatchNorm train), the gain γ it actually uses, and what its closed form reads (running_var, α)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from normbench.jacobian.closed_forms import Formula

GAIN_NAMES = ("weight", "gamma", "g", "scale")  # where norms keep their elementwise gain


@dataclass
class Subject:
    f: Callable[[torch.Tensor], torch.Tensor]  # one input -> its output, same shape
    gamma: torch.Tensor  # (d,) float64, the gain in use (ones for a norm without one)
    extra: dict[str, Any] = field(default_factory=dict)


def _named_param(built, names, wanted: str):
    """built.params[i] where the norm declares param_names[i] == wanted (norms may list their parameters'
    names, e.g. ("alpha", "weight", "bias"); implementations without a module are found that way)."""
    if names and wanted in names and len(built.params) == len(names):
        return built.params[list(names).index(wanted)]
    return None


def find_gain(built, d: int, names=None) -> torch.Tensor | None:
    """The elementwise gain tensor of a built norm: a module attribute named like a gain, else the
    parameter the norm names `weight`, else the first parameter of shape (d,) (functional and composite
    impls pass [weight, bias])."""
    module = built.module
    for name in GAIN_NAMES:
        t = getattr(module, name, None) if module is not None else None
        if isinstance(t, torch.Tensor) and tuple(t.shape) == (d,):
            return t
    named = _named_param(built, names, "weight")
    if named is not None and tuple(named.shape) == (d,):
        return named
    return next((t for t in built.params if tuple(t.shape) == (d,)), None)


def find_alpha(built, names=None) -> torch.Tensor:
    """DyT's scalar α: the module's `alpha`, else its one parameter or buffer whose name ends in alpha,
    else the parameter the norm names `alpha`."""
    module = built.module
    alpha = getattr(module, "alpha", None) if module is not None else None
    if alpha is None and module is not None:
        named = dict(module.named_parameters()) | dict(module.named_buffers())
        alpha = next((t for n, t in named.items() if n.split(".")[-1].endswith("alpha")), None)
    if alpha is None:
        alpha = _named_param(built, names, "alpha")
    if alpha is None:
        raise RuntimeError("the dyt implementation exposes no alpha (module attribute or named parameter)")
    return torch.as_tensor(alpha).detach().double().cpu().reshape(())


def random_gain(d: int, seed: int) -> np.ndarray:
    """γ = 1 + 0.5·N(0, 1), seeded apart from the inputs: spread enough that max|γ| is one coordinate,
    so LayerNorm's and RMSNorm's max|γ|/s are bounds, not equalities."""
    return 1.0 + 0.5 * np.random.default_rng([seed, 0x6A61]).standard_normal(d)


def build_subject(
    norm: str, impl: str, d: int, formula: Formula, *, eps: float, dtype, device: str, gain: str, seed: int
) -> Subject:
    from normbench.core.errors import SkipCase
    from normbench.norms import get_norm

    norm_obj = get_norm(norm)
    names = getattr(norm_obj, "param_names", None)
    built = norm_obj.build(impl, d, eps=eps, dtype=dtype, device=device)
    gain_t = find_gain(built, d, names)
    if gain == "random":
        if gain_t is None:
            raise SkipCase(f"{norm}:{impl} exposes no gain tensor of shape ({d},) to randomise")
        with torch.no_grad():
            gain_t.copy_(torch.as_tensor(random_gain(d, seed)))
    gamma = gain_t.detach().double().cpu() if gain_t is not None else torch.ones(d, dtype=torch.float64)
    module = built.module
    if isinstance(module, torch.nn.modules.batchnorm._BatchNorm) and module.training:
        # The running-statistics update is a side effect that never enters the output (train mode
        # normalizes with the batch statistics), and an in-place write to an unbatched buffer cannot run
        # under vmap. Switching the tracking off leaves the function of x unchanged.
        module.track_running_stats = False
    extra: dict[str, Any] = {}
    if "running_var" in formula.needs:
        extra["running_var"] = module.running_var.detach().double().cpu()
    if "alpha" in formula.needs:
        extra["alpha"] = find_alpha(built, names)
    fn = built.fn
    if formula.layout == "row":

        def f(x):  # norms take (tokens, hidden); one input is one row
            return fn(x.unsqueeze(0)).squeeze(0)
    else:
        f = fn
    return Subject(f, gamma, extra)
