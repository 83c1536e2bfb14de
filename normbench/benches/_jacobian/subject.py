"""The norm under test, as the Jacobian bench needs it: a function of one input (a row, or a batch for
BatchNorm train), the gain γ it actually uses (the norm's declared `gain_name`), and what its closed form
reads (its parameters and buffers by name: alpha, running_var, ...)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from normbench.core.errors import SkipCase
from normbench.norms import get_norm
from normbench.norms.closed_form import Formula
from normbench.norms.registry import check_output


@dataclass
class Subject:
    f: Callable[[torch.Tensor], torch.Tensor]  # one input -> its output, same shape
    gamma: torch.Tensor  # (d,) float64, the gain in use (ones for a norm without one)
    extra: dict[str, Any] = field(default_factory=dict)


def find_gain(norm, built) -> torch.Tensor | None:
    """The norm's declared elementwise gain (`Norm.gain_name` among `Norm.param_names`), or None."""
    if norm.gain_name is None:
        return None
    names = list(norm.param_names)
    if len(built.params) != len(names):
        raise RuntimeError(
            f"{norm.name} declares param_names {tuple(names)} but the implementation has "
            f"{len(built.params)} parameters"
        )
    return built.params[names.index(norm.gain_name)]


def closed_form_extra(norm, built) -> dict[str, torch.Tensor]:
    """What a closed form may read besides x, γ and ε: every parameter by its declared name and every
    buffer of the module by its name (running_var, running_phi), as float64 on the CPU."""
    extra = {name: t.detach().double().cpu() for name, t in zip(norm.param_names, built.params, strict=False)}
    if isinstance(built.module, torch.nn.Module):
        for name, t in built.module.named_buffers():
            if t.is_floating_point():
                extra[name.split(".")[-1]] = t.detach().double().cpu()
    return extra


def random_gain(d: int, seed: int) -> np.ndarray:
    """γ = 1 + 0.5·N(0, 1), seeded apart from the inputs: spread enough that max|γ| is one coordinate,
    so LayerNorm's and RMSNorm's max|γ|/s are bounds, not equalities."""
    return 1.0 + 0.5 * np.random.default_rng([seed, 0x6A61]).standard_normal(d)


def build_subject(
    norm: str, impl: str, d: int, formula: Formula, *, eps: float, dtype, device: str, gain: str, seed: int
) -> Subject:
    norm_obj = get_norm(norm)
    built = norm_obj.build(impl, d, eps=eps, dtype=dtype, device=device)
    gain_t = find_gain(norm_obj, built)
    if gain == "random":
        if gain_t is None or tuple(gain_t.shape) != (d,):
            raise SkipCase(f"{norm}:{impl} declares no gain of shape ({d},) to randomise")
        with torch.no_grad():
            gain_t.copy_(torch.as_tensor(random_gain(d, seed)))
    gamma = gain_t.detach().double().cpu() if gain_t is not None else torch.ones(d, dtype=torch.float64)
    module = built.module
    if isinstance(module, torch.nn.modules.batchnorm._BatchNorm) and module.training:
        # The running-statistics update is a side effect that never enters the output (train mode
        # normalizes with the batch statistics), and an in-place write to an unbatched buffer cannot run
        # under vmap. Switching the tracking off leaves the function of x unchanged.
        module.track_running_stats = False
    extra = closed_form_extra(norm_obj, built)

    fn = built.fn
    if formula.layout == "row":

        def f(x):  # norms take (tokens, d); one input is one row
            y = fn(x.unsqueeze(0))
            check_output(y, x.unsqueeze(0))  # shapes are known under jacrev/vmap too: free
            return y.squeeze(0)
    else:

        def f(x):
            y = fn(x)
            check_output(y, x)
            return y

    return Subject(f, gamma, extra)
