"""Test-only norm for the compare tests (loaded through NORMBENCH_PLUGINS): `testslow:steady` is a plain
LayerNorm call; `testslow:slowed` is the same call, plus a 2 ms busy-wait when NORMBENCH_TEST_SLOW=1."""

from __future__ import annotations

import os
import time

import torch.nn.functional as F

from normbench.norms.registry import Built, Norm, impl, register_norm


@register_norm
class TestSlow(Norm):
    name = "testslow"
    description = "test only: a LayerNorm that can be slowed on purpose"

    @impl("steady", baseline=True)
    def steady(self, hidden, *, eps, dtype, device):
        return Built(lambda x: F.layer_norm(x, (hidden,), eps=eps))

    @impl("slowed")
    def slowed(self, hidden, *, eps, dtype, device):
        delay = 2e-3 if os.environ.get("NORMBENCH_TEST_SLOW") == "1" else 0.0

        def fn(x):
            end = time.perf_counter() + delay
            while time.perf_counter() < end:
                pass
            return F.layer_norm(x, (hidden,), eps=eps)

        return Built(fn)

    def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
        return 2 * tokens * hidden * itemsize
