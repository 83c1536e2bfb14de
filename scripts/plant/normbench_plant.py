"""A plugin norm for the gate benchmarks (scripts/paired_gate.py; NORMBENCH_PLUGINS=normbench_plant):
`plantnorm:planted` is F.layer_norm, plus F.layer_norm on the first (F - 1) of the rows when NORMBENCH_PLANT=F
(F = 1.3: 1.3x the rows normalized per call). Unset or 1: exactly F.layer_norm."""

from __future__ import annotations

import os

import torch.nn.functional as F

from normbench.norms.registry import Built, Norm, impl, register_norm


def _extra_rows(x) -> int:
    factor = float(os.environ.get("NORMBENCH_PLANT", "1") or 1)
    return round((factor - 1) * x.shape[0])


@register_norm
class PlantNorm(Norm):
    name = "plantnorm"
    description = "gate benchmarks only: LayerNorm that does more work when NORMBENCH_PLANT is set"

    @impl("planted", baseline=True)
    def planted(self, hidden, *, eps, dtype, device):
        def fn(x):
            y = F.layer_norm(x, (hidden,), eps=eps)
            if (extra := _extra_rows(x)) > 0:
                F.layer_norm(x[:extra], (hidden,), eps=eps)
            return y

        return Built(fn)

    def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
        return 2 * tokens * hidden * itemsize
