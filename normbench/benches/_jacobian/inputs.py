"""Seeded input distributions for the Jacobian bench. Every distribution is σ·(z + μ/σ): `scale` is σ and
`mean` is the offset μ/σ in units of σ, so the offset's effect on √d/‖x‖ (the factor √(1 + μ²/var)) does
not depend on σ, and σ alone moves the row's variance past √ε.

Details: docs/methodology.md, "Jacobian bounds"."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where rows are drawn: the bench's parameter specs read DISTS only
    import numpy as np

DISTS = ("gaussian", "student_t", "outlier", "constant")


def draw_rows(
    dist: str,
    rows: int,
    length: int,
    *,
    mean: float = 0.0,
    scale: float = 1.0,
    df: float = 3.0,
    outlier: float = 100.0,
    seed: int = 0,
) -> np.ndarray:
    """(rows, length) float64 samples of `dist`, as described in the module docstring."""
    import numpy as np

    rng = np.random.default_rng(seed)
    if dist == "gaussian":
        z = rng.standard_normal((rows, length))
    elif dist == "student_t":
        z = rng.standard_t(df, (rows, length))
    elif dist == "outlier":
        z = rng.standard_normal((rows, length))
        z[np.arange(rows), rng.integers(0, length, rows)] = outlier
    elif dist == "constant":
        z = np.repeat(rng.standard_normal((rows, 1)), length, axis=1)
    else:
        raise ValueError(f"unknown distribution {dist!r}; one of {', '.join(DISTS)}")
    return scale * (z + mean)


def make_inputs(dist: str, n: int, d: int, *, batch: int | None = None, dtype=None, device="cpu", **kw):
    """n inputs as a torch tensor: (n, d) rows, or with `batch` = m, (n, m, d) batches whose every
    channel column (length m, the axis BatchNorm normalizes) is one row of the distribution."""
    import numpy as np
    import torch

    if batch is None:
        x = draw_rows(dist, n, d, **kw)
    else:
        x = draw_rows(dist, n * d, batch, **kw).reshape(n, d, batch).transpose(0, 2, 1)
    return torch.tensor(np.ascontiguousarray(x), dtype=torch.float64, device=device).to(
        dtype or torch.float64
    )
