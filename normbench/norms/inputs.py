"""The inputs a norm is measured on, shared by the benches and `normbench selfcheck`: seeded input
distributions (the latency bench's `input` parameter) and parameters moved off their initial values."""

from __future__ import annotations

# Input distributions (the `input` parameter):
#   normal   x ~ N(0, 1)
#   shifted  x = -2.3 + 0.5 * N(0, 1), TritonBench's layer_norm input: a mean far from zero is where a
#            one-pass E[x^2] - E[x]^2 variance loses digits
#   lowvar   row r is m_r + s * N(0, 1) with m_r ~ N(0, 1) and s = 0.01 * sqrt(eps): each row's variance is
#            1e-4 * eps, far below eps, the regime where eps dominates LN's denominator
INPUTS = ("normal", "shifted", "lowvar")


def make_input(kind: str, tokens: int, d: int, *, dtype, device: str, seed: int, eps: float = 1e-5):
    """A (tokens, d) input of distribution `kind`, drawn in float32 on the device from a generator
    seeded with `seed` (so building norms never shifts it), then cast to dtype."""
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    z = torch.randn(tokens, d, device=device, generator=g)
    if kind == "shifted":
        z = -2.3 + 0.5 * z
    elif kind == "lowvar":
        row_means = torch.randn(tokens, 1, device=device, generator=g)
        z = row_means + (0.01 * eps**0.5) * z
    elif kind != "normal":
        raise ValueError(f"unknown input distribution {kind!r}; one of {', '.join(INPUTS)}")
    return z.to(dtype)


def perturb_params(built, seed: int) -> None:
    """Move every parameter off its initial value by 0.1 * N(0, 1), drawn on the CPU from `seed`: gains
    and biases that are not 1 and 0 exercise the affine part, and two implementations of one norm (same
    parameter order and init) get identical values."""
    import torch

    g = torch.Generator().manual_seed(seed + 7919)
    with torch.no_grad():
        for t in built.params:
            t.add_((0.1 * torch.randn(t.shape, generator=g)).to(dtype=t.dtype, device=t.device))
