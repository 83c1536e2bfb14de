"""How much a batch's token histogram varies, against what i.i.d. tokens would give: the data-side cause of
batch-statistics fluctuation (PowerNorm, Shen et al. 2020, §3). A batch whose tokens were n independent
draws from the corpus's distribution p has E‖h_B − p‖² = (1 − Σ_v p_v²)/n (each count is binomial:
Var(h_v) = p_v(1 − p_v)/n, summed over v).

Details: docs/methodology.md, "Padded batches of whole sentences"."""

from __future__ import annotations

import math


def pool_distribution(tokens, vocab: int):
    """p: the token frequencies (float64, sums to 1) of the pool the batches are drawn from."""
    import torch

    counts = torch.bincount(tokens.reshape(-1), minlength=vocab).double()
    return counts / counts.sum()


class HistogramVariation:
    """Accumulates ‖h_B − p‖² and the i.i.d. expectation (1 − Σp²)/n_B over batches (`add` per batch)."""

    def __init__(self, p):
        self.p = p
        self.collision = float((p**2).sum())  # Σ p²
        self.sq = 0.0
        self.iid = 0.0
        self.batches = 0

    def add(self, tokens) -> None:
        """tokens: a batch's real tokens, any shape (padded positions already left out)."""
        import torch

        flat = tokens.reshape(-1)
        n = int(flat.numel())
        h = torch.bincount(flat, minlength=len(self.p)).double() / n
        self.sq += float(((h - self.p) ** 2).sum())
        self.iid += (1 - self.collision) / n
        self.batches += 1

    def result(self) -> dict[str, float]:
        """{"dist": √mean ‖h_B − p‖², "iid": √mean (1 − Σp²)/n_B, "ratio": dist / iid} (NaN before a batch)."""
        if not self.batches:
            return {"dist": math.nan, "iid": math.nan, "ratio": math.nan}
        dist, iid = math.sqrt(self.sq / self.batches), math.sqrt(self.iid / self.batches)
        return {"dist": dist, "iid": iid, "ratio": dist / iid if iid > 0 else math.nan}
