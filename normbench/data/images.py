"""Generated images for the CNN control: ten shape classes on varied backgrounds, seeded, no download.

Details: docs/methodology.md, "The CNN control"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CLASSES = (
    "disk", "square", "diamond", "ring", "plus", "x", "hbar", "vbar", "triangle", "hollow_square",
)  # fmt: skip
SIZE = 16
NOISE = 0.1


@dataclass
class ImageData:
    train: Any  # (N, 3, S, S) float32, standardized
    train_labels: Any  # (N,) int64
    held_out: Any
    held_out_labels: Any
    classes: int = len(CLASSES)
    info: dict[str, Any] | None = None


def shape_masks(dx, dy, size):
    """(C, N, S, S) bool: every class's shape at offsets (dx, dy) from each image's centre, radius size."""
    import torch

    ax, ay, r = dx.abs(), dy.abs(), torch.sqrt(dx**2 + dy**2)
    box, thin = torch.maximum(ax, ay), size / 3
    return torch.stack(
        [
            r <= size,  # disk
            box <= size,  # square
            ax + ay <= size,  # diamond
            (r <= size) & (r >= size - 1.5),  # ring
            ((ax <= thin) & (ay <= size)) | ((ay <= thin) & (ax <= size)),  # plus
            ((ax - ay).abs() <= thin) & (box <= size),  # X
            (ay <= thin) & (ax <= size),  # horizontal bar
            (ax <= thin) & (ay <= size),  # vertical bar
            (dy >= -size) & (dy <= size) & (2 * ax <= dy + size),  # triangle, apex up
            (box <= size) & (box >= size - 1.5),  # hollow square
        ]
    )


def draw(n: int, generator):
    """(images (n, 3, S, S) in about [0, 1] before standardization, labels (n,))."""
    import torch

    g = generator
    labels = torch.randint(len(CLASSES), (n,), generator=g)
    size = 3 + 3 * torch.rand(n, 1, 1, generator=g)
    centre = 6 + (SIZE - 13) * torch.rand(n, 2, 1, 1, generator=g) + 0.5
    ys, xs = torch.meshgrid(
        torch.arange(SIZE, dtype=torch.float32), torch.arange(SIZE, dtype=torch.float32), indexing="ij"
    )
    dx, dy = xs[None] - centre[:, 0], ys[None] - centre[:, 1]
    mask = shape_masks(dx, dy, size)[labels, torch.arange(n)]  # (n, S, S): each image's own class
    fg, bg = torch.rand(n, 3, 1, 1, generator=g), torch.rand(n, 3, 1, 1, generator=g)
    slope = 0.5 * (torch.rand(n, 2, 1, 1, generator=g) - 0.5)  # brightness change across the image
    ramp = 1 + slope[:, :1] * (xs / SIZE - 0.5) + slope[:, 1:] * (ys / SIZE - 0.5)
    image = torch.where(mask[:, None], fg, bg * ramp)  # ramp: (n, 1, S, S)
    image = image + NOISE * torch.randn(n, 3, SIZE, SIZE, generator=g)
    return image, labels


def shapes_data(seed: int, train: int, held_out: int) -> ImageData:
    import torch

    g = torch.Generator().manual_seed(seed)
    x, y = draw(train, g)
    hx, hy = draw(held_out, g)
    mean, sd = x.mean((0, 2, 3), keepdim=True), x.std((0, 2, 3), keepdim=True)
    return ImageData(
        (x - mean) / sd,
        y,
        (hx - mean) / sd,
        hy,
        info={
            "source": "shapes",
            "seed": seed,
            "size": SIZE,
            "noise": NOISE,
            "train": train,
            "held_out": held_out,
        },
    )
