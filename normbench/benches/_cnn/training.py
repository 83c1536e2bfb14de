"""The cnn bench's training loop: SGD with momentum (or Adam), a linear lr warm-up, batches drawn from the
generated training images in a seeded order (an epoch is a fresh permutation), the held-out loss and
accuracy in eval mode at the end (BatchNorm with its running statistics, as at inference). Every `every`
steps the norms with batch statistics record how far the batch's statistics are from the running ones
(benches/_lm/fluctuation.py, the Transformer's rows); a non-finite loss ends the run as diverged."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import torch

from normbench.benches._lm.fluctuation import FluctuationRecorder
from normbench.models.cnn import CNNConfig, SmallCNN
from normbench.models.mlp import MLP, MLPConfig

EVAL_BATCH = 256


@dataclass
class CNNResult:
    rows: list[dict] = field(default_factory=list)
    status: str = "ok"
    reason: str | None = None


def image_batches(n: int, batch: int, generator):
    """Endless lists of image indices: each epoch a fresh permutation, cut into batches (the rest dropped)."""
    while True:
        order = torch.randperm(n, generator=generator)
        yield from order[: n - n % batch].view(-1, batch)


@torch.no_grad()
def evaluate(model, images, labels, device) -> tuple[float, float]:
    """(mean cross-entropy in nats, accuracy) over the held-out images, in eval mode."""
    model.eval()
    loss = correct = 0.0
    try:
        for k in range(0, len(images), EVAL_BATCH):
            x, y = images[k : k + EVAL_BATCH].to(device), labels[k : k + EVAL_BATCH].to(device)
            logits = model(x)
            loss += float(torch.nn.functional.cross_entropy(logits, y, reduction="sum"))
            correct += float((logits.argmax(-1) == y).sum())
    finally:
        model.train()
    return loss / len(images), correct / len(images)


def make_optimizer(model, p):
    if p["optimizer"] == "adam":
        return torch.optim.Adam(model.parameters(), lr=p["lr"], betas=(0.9, 0.999))
    return torch.optim.SGD(model.parameters(), lr=p["lr"], momentum=p["momentum"])


def train_cnn(norm: str, impl: str | None, data, p) -> CNNResult:
    torch.manual_seed(p["seed"])
    if p.get("model", "cnn") == "mlp":
        inputs = data.train[0].numel()
        model = MLP(MLPConfig(norm=norm, impl=impl, inputs=inputs, hidden=p["hidden"], eps=p["eps"]))
    else:
        model = SmallCNN(
            CNNConfig(norm=norm, impl=impl, width=p["width"], size=data.train.shape[-1], eps=p["eps"])
        )
    model = model.to(p["device"])
    opt = make_optimizer(model, p)
    order = image_batches(len(data.train), p["batch"], torch.Generator().manual_seed(p["data_seed"] + 1))
    fluctuation = FluctuationRecorder(model)
    losses = torch.full((p["steps"],), math.nan)
    result, start = CNNResult(), time.perf_counter()
    model.train()
    for step in range(1, p["steps"] + 1):
        for group in opt.param_groups:
            group["lr"] = p["lr"] * min(1.0, step / p["warmup"]) if p["warmup"] else p["lr"]
        idx = next(order)
        if step == 1 or step % p["every"] == 0 or step == p["steps"]:
            fluctuation.arm(step)
        loss = model(data.train[idx].to(p["device"]), data.train_labels[idx].to(p["device"]))
        fluctuation.disarm()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses[step - 1] = loss.detach().cpu()
        if not math.isfinite(float(losses[step - 1])):
            result.status, result.reason = "diverged", f"loss not finite at step {step}"
            break
    wall = time.perf_counter() - start
    ran = losses[:step].tolist()
    rows = [{"metric": "loss", "unit": "nats", "value": v, "step": i} for i, v in enumerate(ran, start=1)]
    rows += [{**r, "value": float(r["value"])} for r in fluctuation.rows]
    rows.append({"metric": "train_wall_s", "unit": "s", "value": wall})
    if result.status == "ok":
        final, accuracy = evaluate(model, data.held_out, data.held_out_labels, p["device"])
        tail = ran[-20:]
        rows += [
            {"metric": "final_loss", "unit": "nats", "value": final},
            {"metric": "accuracy", "unit": "ratio", "value": accuracy},
            {"metric": "final_train_loss", "unit": "nats", "value": sum(tail) / len(tail)},
            {"metric": "chance_loss", "unit": "nats", "value": math.log(data.classes)},
        ]
    result.rows = rows
    return result
