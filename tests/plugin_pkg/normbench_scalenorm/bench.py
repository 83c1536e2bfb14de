"""A bench kind from outside normbench: the output statistics of each norm's baseline implementation on a
shifted, scaled Gaussian input (RMS of the output, and its mean), so the report shows which norms centre
and which only rescale."""

from __future__ import annotations

from normbench.benches.base import Bench, CaseResult, register_bench
from normbench.core.params import Param


@register_bench
class OutStats(Bench):
    kind = "outstats"
    description = "output RMS and mean of a norm on N(shift, scale^2) input (plugin)"
    all_impls_by_default = False
    params = {
        "hidden": Param(int, 64, minimum=2, help="features per row"),
        "tokens": Param(int, 32, minimum=1, help="rows"),
        "shift": Param(float, 3.0, help="input mean"),
        "scale": Param(float, 2.0, exclusive_minimum=0.0, help="input standard deviation"),
        "seed": Param(int, 0, minimum=0),
        "eps": Param(float, 1e-5, exclusive_minimum=0.0),
    }

    def run_case(self, case, ctx):
        import torch

        from normbench.norms.registry import get_norm

        p = case.params
        gen = torch.Generator().manual_seed(p["seed"])
        x = p["shift"] + p["scale"] * torch.randn(p["tokens"], p["hidden"], generator=gen)
        built = get_norm(case.norm).build(
            case.impl, p["hidden"], eps=p["eps"], dtype=torch.float32, device="cpu"
        )
        with torch.no_grad():
            y = built.fn(x).float()
        rms = y.pow(2).mean(-1).sqrt().mean().item()
        mean = y.mean(-1).abs().mean().item()
        return CaseResult(
            rows=[
                {"metric": "out_rms", "unit": "1", "value": rms},
                {"metric": "out_abs_mean", "unit": "1", "value": mean},
            ]
        )

    def report(self, frame, opts):
        from normbench.core.tables import Table

        rows = frame[frame["bench"] == self.kind]
        if rows.empty:
            return []
        wide = rows.pivot_table(index=["norm", "impl"], columns="metric", values="value").reset_index()
        return [Table("Output statistics (plugin bench)", wide)]
