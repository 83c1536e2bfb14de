"""Heap layouts per round (CPU): where a call's temporaries land in memory can set its speed for as long as
they stay there, and a process keeps one layout for its whole life. Holding a block of a seeded random size
through each round moves the round's temporaries to another place, so the median over rounds is a median
over layouts rather than one process's draw."""

from __future__ import annotations

import random

LAYOUT_SPAN_BYTES = 4 * 2**20  # the block's size is drawn from (0, span]: beyond a core's L2 on both CPUs


class HeapShift:
    """A callable: each call takes a new block from the C allocator (untouched: no page is written) and
    returns it; the caller holds it through one round and drops it after."""

    def __init__(self, seed: int, span: int = LAYOUT_SPAN_BYTES):
        self.rng = random.Random(seed)
        self.span = span

    def __call__(self):
        import torch

        return torch.empty(self.rng.randrange(1, self.span // 64 + 1) * 64, dtype=torch.uint8)


LAYOUTS = ("fixed", "shift")


def heap_shift(p: dict, seed: int) -> HeapShift | None:
    """The relayout of a CPU case with `layout = "shift"` (seeded like its rounds' order), else None."""
    return HeapShift(seed) if p.get("layout") == "shift" and p.get("device", "cpu") == "cpu" else None
