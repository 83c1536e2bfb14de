"""The model at initialization, no training (Xiong et al. 2020 §3.3-3.4, Lemmas 2-3, Theorem 1; Admin, Liu
et al. 2020, Thm 2): what each placement does to the residual stream, the norms' Jacobians and the
gradients before the first step. What is measured and how: docs/methodology.md, "Training stability"."""

from __future__ import annotations

from normbench.benches._init.attention_probe import attention_rows
from normbench.benches._init.scale_invariance import scale_grad_rows
from normbench.benches._lm import MODEL_PARAMS, LMBench, data_rows, site_layer
from normbench.benches.base import CaseResult, register_bench
from normbench.core.params import Param
from normbench.core.tolerance import ulps_tolerance
from normbench.data import objective_batch

PERTURBATION = 0.01  # "small parameter perturbations": 1% of each weight, elementwise
PERTURB_DRAWS = 4


@register_bench
class Init(LMBench):
    kind = "init"
    description = (
        "at init: residual-stream growth, norm input size and Jacobian, FFN gradients per layer, "
        "the norm's scale invariance"
    )
    labels = {**LMBench.labels, "scale": float}  # scale_grad_ratio: the factor c on the weight
    # compare: Admin's output change (Liu et al. 2020, Fig. 4: larger = more amplified by the residual
    # branches, less stable) and Xiong's FFN gradient at init (Theorem 1: large at the last layers of
    # Post-LN), per layer and site; both deterministic for a seed.
    compare_metrics = {"output_change": "lower", "ffn_grad_norm_of_mean": "lower"}

    def compare_tolerance(self, metric, params):
        # fp32 forward and backward passes; the output change is a difference of two forward passes at a 1%
        # perturbation, squared: it keeps ~2 fewer digits than the passes themselves (1024 ulps ~ 1.2e-4)

        return ulps_tolerance(1024 if metric == "output_change" else 64, "fp32")

    params = {
        **MODEL_PARAMS,
        "batches": Param(int, 8, minimum=1, help="batches the gradient statistics average over"),
        "jacobian_tokens": Param(int, 64, minimum=1, help="tokens per norm whose exact Jacobian is computed"),
    }

    def run_case(self, case, ctx):
        p = case.params
        model, data = self.model_and_data(case, ctx)
        scale_rows = scale_grad_rows(case.norm, case.impl, p["d"], p["eps"], p["seed"])
        attention = attention_rows(model, data, p)  # DeepNet Lemma 4.1 (benches/_init/attention_probe.py)
        return CaseResult(init_rows(model, data, p) + data_rows(data) + scale_rows + attention)

    def report(self, frame, opts):
        from normbench.benches._init.report import init_tables

        return init_tables(frame)


def init_rows(model, data, p) -> list[dict]:
    """All per-layer rows for one seeded model (also what the tests check against a hand computation)."""
    import torch

    d, n = model.cfg.d, len(model.blocks)
    generator = torch.Generator().manual_seed(p["data_seed"])
    masks = torch.Generator().manual_seed(p["data_seed"] + 3)  # as the training loop's masks
    ffn = [
        (layer, name, getattr(block.ffn, name).weight)
        for layer, block in enumerate(model.blocks, start=1)
        for name in ("fc1", "fc2")
    ]
    grad_sum = [torch.zeros_like(w) for *_, w in ffn]
    norm_sum = torch.zeros(len(ffn), dtype=torch.float64)
    stream_sum = torch.zeros(n + 1, dtype=torch.float64)
    norms = model.norms()
    ln_sum = torch.zeros(len(norms), dtype=torch.float64)
    rows: list[dict] = []
    for b in range(p["batches"]):
        x, y, mask = objective_batch(
            data.train,
            p["batch"],
            p["seq"],
            model.cfg.objective,
            data.vocab,
            p.get("mask_prob", 0.15),
            generator,
            masks,
        )
        mask = None if mask is None else mask.to(p["device"])
        stream: list = []
        for m in norms:
            m.kept = []
        try:
            loss = model(x.to(p["device"]), y.to(p["device"]), stream=stream, mask=mask)
            kept = [torch.cat(m.kept) for m in norms]
        finally:
            for m in norms:
                m.kept = None
        grads = torch.autograd.grad(loss, [w for *_, w in ffn])
        for i, g in enumerate(grads):
            grad_sum[i] += g
            norm_sum[i] += float(torch.linalg.matrix_norm(g))  # Frobenius
        stream_sum += torch.stack([(s.double() ** 2).sum(-1).mean() / d for s in stream]).cpu()
        ln_sum += torch.stack([(k.double() ** 2).sum(-1).mean() / k.shape[-1] for k in kept]).cpu()
        if b == 0:  # the Jacobian and the output change at the first batch's actual inputs
            rows += jacobian_rows(norms, kept, model.cfg, p["jacobian_tokens"], n)
            rows += output_change_rows(model, x.to(p["device"]), p.get("seed", 0))
    B = p["batches"]
    rows += [
        {
            "metric": "stream_sq_norm",
            "unit": "||x||^2/d",
            "value": float(v) / B,
            "layer": layer,
            "site": "stream",
        }
        for layer, v in enumerate(stream_sum)
    ]
    rows += [
        {
            "metric": "ln_input_sq_norm",
            "unit": "||x||^2/d",
            "value": float(v) / B,
            "layer": site_layer(m.site, n),
            "site": m.site,
        }
        for m, v in zip(norms, ln_sum, strict=True)
    ]
    for (layer, name, _), g, s in zip(ffn, grad_sum, norm_sum, strict=True):
        rows.append(
            {
                "metric": "ffn_grad_norm_of_mean",
                "unit": "Frobenius",
                "value": float(torch.linalg.matrix_norm(g / B)),
                "layer": layer,
                "site": name,
            }
        )
        rows.append(
            {
                "metric": "ffn_grad_mean_of_norms",
                "unit": "Frobenius",
                "value": float(s) / B,
                "layer": layer,
                "site": name,
            }
        )
    return rows


def output_change_rows(model, x, seed: int) -> list[dict]:
    """Admin's output change under a 1% relative perturbation of every branch weight (weights restored)."""
    import torch

    weights = [
        m.weight
        for block in model.blocks
        for m in (block.attn.q_proj, block.attn.k_proj, block.attn.v_proj, block.attn.out_proj)
        + (block.ffn.fc1, block.ffn.fc2)
    ]
    generator = torch.Generator().manual_seed(seed + 7)  # apart from the model's and the batches' streams
    total = 0.0
    with torch.no_grad():
        f0 = model.head_input(x)
        saved = [w.detach().clone() for w in weights]
        try:
            for _ in range(PERTURB_DRAWS):
                for w, w0 in zip(weights, saved, strict=True):
                    noise = torch.randn(w0.shape, generator=generator).to(w0.device)
                    w.copy_(w0 * (1 + PERTURBATION * noise))
                total += float((model.head_input(x) - f0).double().pow(2).sum(-1).mean())
        finally:
            for w, w0 in zip(weights, saved, strict=True):
                w.copy_(w0)
    layer = len(model.blocks) + 1  # F is the head's input
    return [
        {
            "metric": "output_change",
            "unit": "||dF||^2/token",
            "value": total / PERTURB_DRAWS,
            "layer": layer,
            "site": "head_input",
        }
    ]


def jacobian_rows(norms, kept, cfg, tokens: int, n_layers: int) -> list[dict]:
    """Mean over `tokens` tokens of ||dLN(x)/dx||_2 at each norm's actual input, exact (SVD of the d x d
    Jacobian), and the closed form 1/sqrt(var + eps) (LayerNorm) / 1/sqrt(mean(x^2) + eps) (RMSNorm), valid
    at gain 1 and d >= 3; and Xiong's zero-mean approximation sqrt(d)/||x||."""
    import torch
    from torch.func import jacrev, vmap

    rows = []
    for m, x in zip(norms, kept, strict=True):
        if m.flatten:  # statistics over the batch: no per-token Jacobian (each output depends on the batch)
            continue
        xs = x.reshape(-1, x.shape[-1])[:tokens]  # (n, d): the first tokens of the batch
        jac = vmap(jacrev(m.inner))(xs)  # (n, d, d): d LN(x_i) / d x_i, one token at a time
        layer = site_layer(m.site, n_layers)
        values = {
            "ln_jacobian": torch.linalg.matrix_norm(jac, ord=2),
            "ln_jacobian_xiong": xs.shape[-1] ** 0.5 / xs.norm(dim=-1),
        }
        stat = {"layernorm": xs.var(-1, unbiased=False), "rmsnorm": (xs**2).mean(-1)}.get(cfg.norm)
        if stat is not None:
            values["ln_jacobian_closed"] = 1 / (stat + cfg.eps).sqrt()
        rows += [
            {
                "metric": k,
                "unit": "spectral",
                "value": float(v.detach().mean()),
                "layer": layer,
                "site": m.site,
            }
            for k, v in values.items()
        ]
    return rows
