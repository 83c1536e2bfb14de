"""Scale invariance and its implicit learning-rate decay (Ba et al. 2016, "Layer Normalization" §5): a norm
whose output does not change when the weight matrix W feeding it is scaled by c makes the gradient with
respect to W shrink as 1/c, so the effective step size falls as ||W|| grows during training.

Details: docs/methodology.md, "Training stability"."""

from __future__ import annotations

from normbench.norms import get_norm

SCALES = (2.0, 10.0)
TOKENS = 256


def scale_grad_rows(norm: str, impl: str | None, d: int, eps: float, seed: int) -> list[dict]:
    """One `scale_grad_ratio` row per c in SCALES for the registry norm's module at width d."""
    import torch

    registered = get_norm(norm)
    impl = impl or registered.baseline
    g = torch.Generator().manual_seed(seed + 11)  # apart from the model's and the batches' streams
    x = torch.randn(TOKENS, d, generator=g, dtype=torch.float64)
    w0 = torch.randn(d, d, generator=g, dtype=torch.float64) / d**0.5
    r = torch.randn(TOKENS, d, generator=g, dtype=torch.float64)

    def grad_norm(c: float) -> float:
        # a fresh module per scale: a BatchNorm's running statistics must not carry over between them
        module = registered.build(impl, d, eps=eps, dtype=torch.float64, device="cpu").module
        w = (c * w0).requires_grad_(True)
        y = module(x @ w.T)
        (grad,) = torch.autograd.grad((y * r).sum(), w)
        return float(torch.linalg.matrix_norm(grad))

    base = grad_norm(1.0)
    return [
        {"metric": "scale_grad_ratio", "unit": "ratio", "value": grad_norm(c) / base, "scale": c}
        for c in SCALES
    ]
