"""The training loop of the training benches (stability, encdec) and the LM's diagnostics (DeepNet §3, Fig. 4).

Adam or SGD on all parameters or one group (`trainable`), warmup then a constant or inverse-sqrt lr, windows
(or padded sentences, _lm/batches.py) from a generator seeded apart from the model. Every `every` steps it
records the loss, lr and gradient norms of step t's batch and, after update t on a fixed probe batch, the
model update per token and every norm's input norm, and batch-statistic distances (_lm/fluctuation.py).
Why the probe runs in train mode, and the loop's speed: docs/methodology.md, "Training stability"."""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from functools import partial

import torch

from normbench.benches._lm import site_layer
from normbench.benches._lm.batches import BatchesDrawn, batch_loss, batches
from normbench.benches._lm.fluctuation import FluctuationRecorder, arm_nu_probe, nu_share_rows
from normbench.benches._lm.trained import TrainResult, TrainSpec
from normbench.data import unigram_loss


def lr_at(step: int, spec: TrainSpec) -> float:
    """Learning rate of update `step` (1-based): linear warmup lr * step / warmup, then constant or
    lr * sqrt(warmup / step) (fairseq's inverse_sqrt)."""
    if spec.warmup and step < spec.warmup:
        return spec.lr * step / spec.warmup
    if spec.schedule == "inverse_sqrt":
        return spec.lr * math.sqrt(max(spec.warmup, 1) / step)
    return spec.lr


def layer_groups(model) -> list[tuple[int, str, list]]:
    """(layer, site, parameters): the embeddings and their norm (layer 0), each block (1..N), the head and
    final norm (N+1)."""
    n = len(model.blocks)
    emb_norm = list(model.emb_norm.parameters()) if model.emb_norm is not None else []  # Peri-LN's
    groups = [(0, "embed", [model.tok_emb.weight, model.pos_emb.weight, *emb_norm])]
    groups += [(i, "block", list(b.parameters())) for i, b in enumerate(model.blocks, start=1)]
    head = [model.head.weight] + (list(model.final_norm.parameters()) if model.final_norm is not None else [])
    return groups + [(n + 1, "head", head)]


def grad_norm_rows(groups, step: int) -> list[dict]:
    """Total and per-layer L2 norms of the gradients (one vector per layer, all its parameters)."""
    per_layer = []
    for _, _, params in groups:
        grads = [p.grad for p in params if p.grad is not None]
        per_layer.append(
            torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads))) if grads else torch.zeros(())
        )
    values = torch.stack(per_layer)
    rows = [
        {"metric": "grad_norm", "unit": "L2", "value": v, "step": step, "layer": layer, "site": site}
        for (layer, site, _), v in zip(groups, values, strict=True)
    ]
    rows.append(
        {"metric": "grad_norm_total", "unit": "L2", "value": torch.linalg.vector_norm(values), "step": step}
    )
    return rows


@contextmanager
def kept_inputs(model):
    """Every norm keeps its inputs (a list per norm) meanwhile; the buffers (running statistics) are restored
    after: a probe must not train the model."""
    norms = model.norms()
    for m in norms:
        m.kept = []
    buffers = [(b, b.clone()) for b in model.buffers()]
    try:
        yield norms
    finally:
        for b, saved in buffers:
            b.copy_(saved)
        for m in norms:
            m.kept = None


@torch.no_grad()
def probe(model, x, pad=None):
    """(F(x), {site: mean input norm}) on the probe batch, every norm keeping its inputs (its real tokens,
    with padding); batch statistics from the probe batch, running statistics restored (a probe must not
    train the model). F is returned at the real tokens only when the batch is padded."""
    with kept_inputs(model) as norms:
        h = model.head_input(x) if pad is None else model.head_input(x, key_padding_mask=pad)[~pad]
        inputs = {m.site: torch.linalg.vector_norm(torch.cat(m.kept), dim=-1).mean() for m in norms}
    return h, inputs


def norm_input_rows(model, inputs: dict, step: int, layer_of) -> list[dict]:
    """ln_input_norm per norm site (its layer: layer_of(site)) and last_ln_input_norm of the head's norm."""
    rows = [
        {
            "metric": "ln_input_norm",
            "unit": "L2",
            "value": v,
            "step": step,
            "layer": layer_of(site),
            "site": site,
        }
        for site, v in inputs.items()
    ]
    last = model.last_norm().site
    return rows + [
        {"metric": "last_ln_input_norm", "unit": "L2", "value": inputs[last], "step": step, "site": last}
    ]


def probe_rows(model, x, h0, step: int, pad=None) -> list[dict]:
    h, inputs = probe(model, x, pad)
    update = torch.linalg.vector_norm(h - h0, dim=-1).mean()
    rows = [{"metric": "model_update", "unit": "L2/token", "value": update, "step": step}]
    return rows + norm_input_rows(model, inputs, step, lambda site: site_layer(site, len(model.blocks)))


@torch.no_grad()
def held_out_loss(model, data, spec: TrainSpec, device) -> tuple[float, float]:
    """(model loss, unigram loss) on eval_batches fixed held-out batches (the same for every case), in eval
    mode. The unigram model's loss on the very same targets (the masked positions for the masked objective)
    is the "learned nothing" baseline a stuck run sits at. Masked: each batch weighted by its masked count,
    so the result is the mean over all masked positions."""
    stream = batches(data, spec, 1, spec.data_seed + 2, spec.data_seed + 5, model.pad_id)
    model_total = unigram_total = weight = 0.0
    was_training = model.training
    model.eval()
    try:
        for _ in range(spec.eval_batches):
            batch = next(stream)
            w = 1.0 if batch[2] is None else float(batch[2].sum())
            model_total += w * float(batch_loss(model, batch, device))
            unigram_total += w * unigram_loss(data.unigram_logp, batch[1], batch[2])
            weight += w
    finally:
        model.train(was_training)
    return model_total / weight, unigram_total / weight


def make_adam(params, lr: float, betas):
    """Adam(eps=1e-8); the fused kernel where this torch has it (CPU since 2.4: ~10% of a step here)."""
    try:
        return torch.optim.Adam(params, lr=lr, betas=betas, eps=1e-8, fused=True)
    except (RuntimeError, TypeError):
        return torch.optim.Adam(params, lr=lr, betas=betas, eps=1e-8, foreach=True)


def make_optimizer(params, spec: TrainSpec):
    if spec.optimizer == "sgd":
        return torch.optim.SGD(params, lr=lr_at(1, spec), momentum=spec.momentum, foreach=True)
    return make_adam(params, lr_at(1, spec), spec.betas)


def trainable(model, group: str, linears=None, embeddings=None, residual=(), matrices=()) -> list:
    """The parameters that train under `group`; every other parameter is frozen (requires_grad False).
    beta_scaled: the v_proj, out_proj, fc1, fc2 weights (and `residual` names), the matrices DeepNet's α/β
    derivation is about (DeepNet §4.3: the update is first order in η on these, SGD); weights: every block
    matrix (q, k too; and `matrices` names); norm_affine: every norm's parameters (LN gains and biases, DyT's
    α); biases: the blocks' Linear biases; embeddings: token and position embeddings. linears: (name, Linear)
    of every block and `embeddings` their weights, the LM's by default."""
    from normbench.models.weight_init import ALL_WEIGHTS, RESIDUAL_WEIGHTS

    if group == "all":
        return list(model.parameters())
    if linears is None:
        linears = [
            (name, module)
            for block in model.blocks
            for name, module in [*block.attn.named_children(), *block.ffn.named_children()]
            if isinstance(module, torch.nn.Linear)
        ]
    groups = {
        "beta_scaled": lambda: [m.weight for n, m in linears if n in RESIDUAL_WEIGHTS + residual],
        "weights": lambda: [m.weight for n, m in linears if n in ALL_WEIGHTS + matrices],
        "norm_affine": lambda: [p for norm in model.norms() for p in norm.parameters()],
        "biases": lambda: [m.bias for _, m in linears if m.bias is not None],
        "embeddings": lambda: embeddings or [model.tok_emb.weight, model.pos_emb.weight],
    }
    if group not in groups:
        raise ValueError(f"train {group!r} is not one of all, {', '.join(groups)}")
    chosen = groups[group]()
    keep = {id(p) for p in chosen}
    for p in model.parameters():
        p.requires_grad_(id(p) in keep)
    return chosen


class TextSteps:
    """The LM's part of the loop: its layer groups and trainable parameters, its batches and loss (with the
    fluctuation and batch-histogram recorders), its probe, and its held-out loss."""

    def __init__(self, model, data, spec: TrainSpec, device: str):
        self.model, self.data, self.spec, self.device = model, data, spec, device
        self.groups, self.trainable = layer_groups(model), partial(trainable, model)
        self.depth = len(model.blocks)  # numbers the norm sites of nu_share_rows

    def start(self) -> list[dict]:
        """Draw the batches and the probe batch; the probe's rows at step 0."""
        model, data, spec = self.model, self.data, self.spec
        self.batches = batches(data, spec, 0, spec.data_seed, spec.data_seed + 3, model.pad_id)
        probe_batch = next(batches(data, spec, 1, spec.data_seed + 1, spec.data_seed + 4, model.pad_id))
        self.probe_x = probe_batch.inputs.to(self.device)
        self.probe_pad = None if probe_batch.pad is None else probe_batch.pad.to(self.device)
        self.fluctuation = FluctuationRecorder(model)
        self.drawn = BatchesDrawn(data, spec)
        self.h0, _ = probe(model, self.probe_x, self.probe_pad)
        return self.probe_rows(0)

    def loss(self, step: int, diagnose: bool):
        if diagnose:
            self.fluctuation.arm(step)
        batch = next(self.batches)
        self.drawn.add(batch)
        loss = batch_loss(self.model, batch, self.device)
        self.fluctuation.disarm()
        return loss

    def probe_rows(self, step: int) -> list[dict]:
        return probe_rows(self.model, self.probe_x, self.h0, step, self.probe_pad)

    def end_rows(self) -> list[dict]:
        return self.fluctuation.rows + self.drawn.rows()

    def held_out(self) -> dict[str, float]:
        loss, unigram = held_out_loss(self.model, self.data, self.spec, self.device)
        return {"loss": loss, "unigram": unigram}


def train(model, data, spec: TrainSpec, device: str = "cpu", steps=TextSteps) -> TrainResult:
    """The training loop of every model family: `steps` (TextSteps for the LM, _encdec/training.py PairSteps
    for the encoder-decoder) gives the model's batches, loss and probe, the loop the rest."""
    family = steps(model, data, spec, device)
    opt = make_optimizer(family.trainable(spec.train), spec)
    for norm in model.norms():  # a norm that follows the lr warm-up (PowerNorm as its authors ran it)
        if hasattr(norm.inner, "follow_lr_warmup"):
            norm.inner.follow_lr_warmup(spec.warmup)
    model.train()
    rows = family.start()
    arm_nu_probe(model)
    losses = torch.full((spec.steps,), math.nan, device=device)
    result = TrainResult()
    checked = 0  # losses[:checked] are known finite
    start = time.perf_counter()
    for step in range(1, spec.steps + 1):
        lr = lr_at(step, spec)
        for group in opt.param_groups:
            group["lr"] = lr
        diagnose = step == 1 or step % spec.every == 0 or step == spec.steps
        loss = family.loss(step, diagnose)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        losses[step - 1] = loss.detach()
        if diagnose:
            rows += grad_norm_rows(family.groups, step)
            rows.append({"metric": "lr", "unit": "lr", "value": lr, "step": step})
        opt.step()
        if diagnose:
            bad = ~torch.isfinite(losses[checked:step])
            if bool(bad.any()):  # the one host sync per diagnostic step
                result.diverged_at = checked + int(bad.nonzero()[0]) + 1
                break
            checked = step
            rows += family.probe_rows(step)
    result.wall_s = time.perf_counter() - start
    result.losses = losses[: result.diverged_at or spec.steps].tolist()
    rows += family.end_rows() + nu_share_rows(model, family.depth)
    rows += [
        {"metric": "loss", "unit": "nats", "value": v, "step": i}
        for i, v in enumerate(result.losses, start=1)
    ]
    if result.diverged_at is None:
        result.scores = family.held_out()
        result.final_loss, result.unigram_loss = result.scores.pop("loss"), result.scores.pop("unigram")
    result.rows = [{**r, "value": float(r["value"])} for r in rows]
    return result
