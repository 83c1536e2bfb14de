"""Batch-statistics fluctuation during training, as PowerNorm (Shen et al. 2020, §3 and Fig. 2) measures it:
for every norm module with batch statistics, on the batch a step trains on, the distance between the
batch's statistics and the running statistics the module holds *before* that step's forward updates them.

Rows (each with step, layer, site), per module that has running_mean / running_var (BatchNorm):
    bn_mean_rel_dist      ||mu_B - mu|| / ||mu||          (ratio)
    bn_var_rel_dist       ||sigma2_B - sigma2|| / ||sigma2||
    bn_mean_dist_d        (1/d) ||mu_B - mu||             (the paper's normalization by the width d)
    bn_var_dist_d         (1/d) ||sigma2_B - sigma2||
    bn_mean_rel_dist_iid  sqrt(sum_c sigma2_B,c / n) / ||mu||, n = tokens in the batch: the distance i.i.d.
                          sampling noise alone gives (E||mean of n i.i.d. draws - mu||^2 = sum_c var_c / n),
                          the "CNN-like" floor; tokens of one sequence are correlated, which is what lifts
                          the measured distance above it. Every batch also holds each position 0..T-1
                          exactly B times, so the position-embedding share of the variance does not
                          fluctuate between batches, which pulls the measured distance below this floor:
                          read the two together, not as a strict lower bound
    bn_mean_shift_sd      √(mean_c (mu_B,c − mu_c)² / sigma2_c): the batch mean's offset in units of each
                          channel's running sd, i.e. how far a train-mode output sits from the same input's
                          inference-mode output; scale-free, so a Transformer and a CNN compare (relative
                          to ||mu|| is not: a channel mean near 0, as after a conv of standardized images,
                          makes it explode)
    bn_var_shift          √(mean_c (sigma2_B,c / sigma2_c − 1)²): the same for the variance
and per module with running_phi (PowerNorm, the running quadratic mean psi^2 per channel):
    pn_qm_rel_dist        ||psi2_B - psi2|| / ||psi2||,  psi2_B = mean over tokens of x^2
mu_B, sigma2_B (biased, as BatchNorm normalizes with) are over the batch's B*T tokens. A relative distance
whose denominator is exactly 0 (a fresh BatchNorm's running mean at step 1) is not a number and is not
stored; its (1/d) row is."""

from __future__ import annotations

from functools import partial

import torch

from normbench.benches._lm import site_layer


def has_batch_stats(module) -> bool:
    names = {name for name, _ in module.named_buffers()}
    return {"running_mean", "running_var"} <= names or "running_phi" in names


@torch.no_grad()
def fluctuation_rows(x, inner) -> list[tuple[str, str, torch.Tensor]]:
    """(metric, unit, value) for one module's (tokens, width) input x against its running statistics."""
    if hasattr(inner, "statistics_input"):  # the statistics run over a transformed input (GroupScaling)
        x = inner.statistics_input(x)
    x = x.double()
    n, d = x.shape
    out = []
    if hasattr(inner, "running_mean") and hasattr(inner, "running_var"):
        mu, var = inner.running_mean.double(), inner.running_var.double()
        mu_b, var_b = x.mean(0), x.var(0, unbiased=False)
        mean_gap, var_gap = torch.linalg.vector_norm(mu_b - mu), torch.linalg.vector_norm(var_b - var)
        out += [("bn_mean_dist_d", "L2/d", mean_gap / d), ("bn_var_dist_d", "L2/d", var_gap / d)]
        mu_norm, var_norm = torch.linalg.vector_norm(mu), torch.linalg.vector_norm(var)
        if float(mu_norm) > 0:
            out += [
                ("bn_mean_rel_dist", "ratio", mean_gap / mu_norm),
                ("bn_mean_rel_dist_iid", "ratio", (var_b.sum() / n).sqrt() / mu_norm),
            ]
        if float(var_norm) > 0:
            out.append(("bn_var_rel_dist", "ratio", var_gap / var_norm))
        if bool((var > 0).all()):
            out += [
                ("bn_mean_shift_sd", "sd", ((mu_b - mu) ** 2 / var).mean().sqrt()),
                ("bn_var_shift", "ratio", ((var_b / var - 1) ** 2).mean().sqrt()),
            ]
    if hasattr(inner, "running_phi"):
        psi2 = inner.running_phi.double().reshape(-1)
        psi2_norm = torch.linalg.vector_norm(psi2)
        if float(psi2_norm) > 0:
            gap = torch.linalg.vector_norm((x**2).mean(0) - psi2)
            out.append(("pn_qm_rel_dist", "ratio", gap / psi2_norm))
    return out


class FluctuationRecorder:
    """Arm it before the forward of a diagnostic step: each norm with batch statistics then adds its rows
    (in train mode only: a probe or held-out forward in eval mode uses, and measures, nothing)."""

    def __init__(self, model):
        self.norms = [m for m in model.norms() if has_batch_stats(m.inner)]
        self.n_layers = len(model.blocks)
        self.rows: list[dict] = []

    def arm(self, step: int) -> None:
        for m in self.norms:
            m.before = partial(self._record, m.site, step)

    def disarm(self) -> None:
        for m in self.norms:
            m.before = None

    def _record(self, site: str, step: int, x, inner) -> None:
        if not inner.training:
            return
        layer = site_layer(site, self.n_layers)
        self.rows += [
            {"metric": metric, "unit": unit, "value": value, "step": step, "layer": layer, "site": site}
            for metric, unit, value in fluctuation_rows(x, inner)
        ]
