"""Batch-statistics fluctuation during training, as PowerNorm (Shen et al. 2020, §3 and Fig. 2) measures it:
for every norm module with batch statistics, on the batch a step trains on, the distance between the
batch's statistics and the running statistics the module holds *before* that step's forward updates them.

Details: docs/methodology.md, "Training stability"."""

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


def arm_nu_probe(model) -> None:
    """Every norm with PowerNorm's ν probe (norms/_powernorm_official.py `nu_shares`) starts recording."""
    for m in model.norms():
        if hasattr(m.inner, "nu_shares"):
            m.inner.nu_shares = []


def nu_share_rows(model, n_layers: int | None = None) -> list[dict]:
    """Per norm site: the median over the run's backward calls of ‖(1−α)ν ⊙ z‖ / ‖g‖ (then the probe stops).
    n_layers: the stack's depth for the site's layer number (the LM's by default)."""
    rows = []
    n_layers = len(model.blocks) if n_layers is None else n_layers
    for m in model.norms():
        shares = getattr(m.inner, "nu_shares", None)
        if shares:
            value = torch.stack(shares).median()
            layer = site_layer(m.site.removeprefix("enc."), n_layers)
            rows.append(
                {"metric": "pn_nu_share", "unit": "ratio", "value": value, "layer": layer, "site": m.site}
            )
        if shares is not None:
            m.inner.nu_shares = None
    return rows
