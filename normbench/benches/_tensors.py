"""Shared helpers for benches that call norm implementations on tensors."""

from __future__ import annotations


def check_device(device: str) -> None:
    import torch

    from normbench.errors import SkipCase

    if device == "cuda" and not torch.cuda.is_available():
        raise SkipCase("CUDA is not available on this machine")


def make_step(built, x, mode: str):
    """(step, check): step() runs one call in `mode`; check(when) raises if the output is not finite.

    fwd: y = fn(x). fwd+bwd: grads of x and of the parameters are reset to None, then y = fn(x) and
    y.backward(dy) with a fixed upstream gradient dy."""
    import torch

    if mode == "fwd":

        def step():
            return built.fn(x)

        def check(when: str) -> None:
            with torch.inference_mode():
                _require_finite(built.fn(x), f"output {when}")

        return step, check

    xg = x.detach().clone().requires_grad_(True)
    dy = torch.randn_like(x)
    tensors = [xg, *built.params]

    def step():
        for t in tensors:
            t.grad = None
        built.fn(xg).backward(dy)

    def check(when: str) -> None:
        step()
        _require_finite(xg.grad, f"input gradient {when}")
        for t in built.params:
            if t.grad is not None:
                _require_finite(t.grad, f"parameter gradient {when}")

    return step, check


def _require_finite(t, what: str) -> None:
    import torch

    if not bool(torch.isfinite(t).all()):
        raise FloatingPointError(f"non-finite values (NaN/inf) in the {what}")
