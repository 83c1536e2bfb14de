"""Shared helpers for benches that call norm implementations on tensors (the inputs they draw: norms/inputs.py)."""

from __future__ import annotations

import re

from normbench.core.errors import SkipCase
from normbench.norms import get_norm
from normbench.norms.registry import check_output

# A suite's dtype name -> torch's (getattr(torch, ...)): every tensor bench takes these four.
DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "fp64": "float64"}


def check_device(device: str) -> None:
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        raise SkipCase("CUDA is not available on this machine")


def check_dtype(dtype, device: str) -> None:
    """Skip a case whose dtype the device lacks: bf16 needs compute capability 8.0 on CUDA."""
    import torch

    if device == "cuda" and dtype == torch.bfloat16 and not torch.cuda.is_bf16_supported():
        raise SkipCase(f"bf16 is not supported on {torch.cuda.get_device_name()}")


# torch's messages for a kernel missing for a dtype (AT_DISPATCH: "\"addmm_impl_cpu_\" not implemented for
# 'Half'") or for a device backend (the dispatcher: "Could not run 'aten::x' with arguments from the 'CUDA'
# backend"). Only these mean "this dtype or device is unsupported"; an implementation's own
# NotImplementedError("todo") or any other error is a failure of the case.
_UNSUPPORTED = (r"not implemented for '\w+'", r"could not run '[^']+' with arguments from the '\w+' backend")


def unsupported_here(exc: BaseException) -> bool:
    """True when exc says the case's dtype or device is unsupported by a kernel (then the case is skipped)."""
    text = str(exc).lower()
    return any(re.search(pattern, text) for pattern in _UNSUPPORTED)


def make_step(built, x, mode: str, dy=None):
    """(step, check): step() runs one call in `mode`; check(when) raises if the output breaks the
    implementation contract (the input's shape, dtype and device) or is not finite.

    fwd: y = fn(x). fwd+bwd: grads of x and of the parameters are reset to None, then y = fn(x) and
    y.backward(dy) with a fixed upstream gradient: a copy of `dy` (another step's step.dy: the same values
    at another address, and ~10x cheaper than drawing 4M normals), else N(0, 1) drawn here.
    step.clear_grads() drops the gradients the last call left (so a memory probe starts from the resident
    tensors only); step.own_tensors lists the tensors the step holds beyond x and the parameters."""
    import torch

    if mode == "fwd":

        def step():
            return built.fn(x)

        def check(when: str) -> None:
            with torch.inference_mode():
                y = built.fn(x)
                check_output(y, x)
                _require_finite(y, f"output {when}")

        step.clear_grads = lambda: None
        step.own_tensors = []
        return step, check

    xg = x.detach().clone().requires_grad_(True)
    dy = torch.randn_like(x) if dy is None else dy.detach().clone()
    tensors = [xg, *built.params]

    def clear_grads():
        for t in tensors:
            t.grad = None

    def step():
        clear_grads()
        built.fn(xg).backward(dy)

    def check(when: str) -> None:
        clear_grads()  # step(), with the output's contract checked before its backward
        y = built.fn(xg)
        check_output(y, xg)
        y.backward(dy)
        _require_finite(xg.grad, f"input gradient {when}")
        for t in built.params:
            if t.grad is not None:
                _require_finite(t.grad, f"parameter gradient {when}")

    step.clear_grads = clear_grads
    step.own_tensors = [xg, dy]  # what this step holds beyond x and the parameters
    step.dy = dy
    return step, check


def _require_finite(t, what: str) -> None:
    import torch

    if not bool(torch.isfinite(t).all()):
        raise FloatingPointError(f"non-finite values (NaN/inf) in the {what}")


def copy_step(x, mode: str, dy=None):
    """The copy probe's call: identity.copy (x.clone()) on the case's own tensor, in the case's mode. It is
    timed in the same case, interleaved with what it anchors (a latency case's norm, a block; see
    timing.measure_interleaved), by the same timer: same size, device, cache state and machine load. dy: the upstream gradient's values in fwd+bwd (make_step)."""
    built = get_norm("identity").build("copy", x.shape[-1], eps=0.0, dtype=x.dtype, device=x.device)
    return make_step(built, x, mode, dy=dy)[0]
