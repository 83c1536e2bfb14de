"""What the training benches (stability: the LM; encdec: the encoder-decoder) share: the optimizer, schedule and
judging parameters, the TrainSpec built from them, a run's TrainResult and its status rule. Torch-free.
Why the status rule reads as it does: docs/methodology.md, "Training stability"."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from normbench.benches.base import Bench, CaseResult
from normbench.core.params import Param
from normbench.core.tolerance import training_tolerance

SCHEDULES = ("constant", "inverse_sqrt")  # _lm/training.py lr_at
OPTIMIZERS = ("adam", "sgd")
# which parameters the optimizer updates (the rest stay at their init); _lm/training.py `trainable`
TRAIN_GROUPS = ("all", "beta_scaled", "weights", "norm_affine", "biases", "embeddings")


def _decay(value: float) -> str | None:
    return None if 0.0 <= value < 1.0 else f"{value!r} must be in [0, 1)"


TRAIN_PARAMS = {
    "lr": Param(float, 1e-3, exclusive_minimum=0.0, help="peak learning rate"),
    "optimizer": Param(
        str,
        "adam",
        choices=OPTIMIZERS,
        help="adam (betas beta1, beta2; eps 1e-8) or sgd (momentum; DeepNet §4.3 derives alpha/beta for SGD)",
    ),
    "beta1": Param(float, 0.9, check=_decay, help="adam: first-moment decay, in [0, 1)"),
    "beta2": Param(float, 0.98, check=_decay, help="adam: second-moment decay, in [0, 1)"),
    "momentum": Param(float, 0.0, check=_decay, help="sgd: momentum in [0, 1) (0 = plain SGD)"),
    "train": Param(
        str,
        "all",
        choices=TRAIN_GROUPS,
        help="parameters that train, the rest frozen: all; beta_scaled = v/out/fc1/fc2 weights (DeepNet's "
        "theta); weights = every block matrix; norm_affine = the norms' gains/biases; biases = the "
        "Linear biases; embeddings = token and position embeddings",
    ),
    "max_tokens": Param(
        int,
        0,
        minimum=0,
        hashed_at_default=False,
        help="0 = `batch` units (padded/bucketed sentences or lines; pairs) a batch; else a token budget as "
        "fairseq's --max-tokens (as many units as fit rows x longest <= max_tokens; `batch` unused)",
    ),
    "warmup": Param(int, 0, minimum=0, help="linear warmup steps (0 = none)"),
    "schedule": Param(str, "constant", choices=SCHEDULES, help="after warmup: constant or inverse_sqrt"),
    "steps": Param(int, 300, minimum=1, help="optimizer updates"),
    "every": Param(int, 10, minimum=1, help="diagnostics every k steps (and at steps 1 and the last)"),
    "eval_batches": Param(int, 16, minimum=1, help="held-out batches for the final loss"),
    "stuck_tol": Param(float, 0.1, minimum=0.0, help="stuck when final loss >= unigram loss - this (nats)"),
    "diverge_margin": Param(
        float,
        1.0,
        exclusive_minimum=0.0,
        help="diverged when final loss > max(unigram loss, lowest training loss) + this (nats)",
    ),
    "judge": Param(
        bool,
        True,
        help="false: no stuck/blow-up verdict (runs of a few steps that measure the early update)",
    ),
}


@dataclass(frozen=True)
class TrainSpec:
    lr: float
    warmup: int
    steps: int
    every: int
    batch: int
    seq: int
    data_seed: int
    schedule: str = "constant"
    eval_batches: int = 16
    betas: tuple[float, float] = (0.9, 0.98)
    objective: str = "causal"
    mask_prob: float = 0.15
    optimizer: str = "adam"  # or "sgd"
    momentum: float = 0.0  # sgd only
    train: str = "all"  # which parameters train (see `trainable`)
    batching: str = "windows"  # or "padded" / "bucketed": whole units, padded (_lm/batches.py)
    segment: str = "sentence"  # the units of padded batching: "sentence" or "line" (data/segments.py)
    max_tokens: int = 0  # padded batching: 0 = `batch` rows; else rows x longest <= max_tokens (fairseq)


@dataclass
class TrainResult:
    rows: list[dict] = field(default_factory=list)  # time series (with `step`) and final values
    losses: list[float] = field(default_factory=list)  # the training loss of every step run
    diverged_at: int | None = None  # first step whose loss is not finite
    final_loss: float = math.nan  # mean held-out loss after training
    unigram_loss: float = math.nan  # the unigram model's loss on the same held-out windows
    scores: dict[str, float] = field(default_factory=dict)  # other held-out scores (the pairs' accuracies)
    wall_s: float = 0.0


class TrainedBench(Bench):
    """A bench kind whose case is one training run: compared on its final loss, judged ok/stuck/diverged."""

    compare_metrics = {"final_loss": "lower"}  # pooled over seeds by `normbench compare`

    def compare_tolerance(self, metric, params):
        # fp32 training: a last-bit difference between CPUs is carried forward by every optimizer step
        return training_tolerance(params.get("steps") or 1)

    def check_case(self, params, norm, impl):
        problems = super().check_case(params, norm, impl)
        if params["optimizer"] == "adam" and params["momentum"] != 0:
            problems.append(("momentum", 'momentum is an SGD setting; with optimizer = "adam" use beta1'))
        if params["optimizer"] == "sgd" and (params["beta1"], params["beta2"]) != (0.9, 0.98):
            problems.append(("beta1", 'beta1/beta2 are Adam settings; with optimizer = "sgd" use momentum'))
        return problems

    def per_case(self, rows):
        from normbench.benches._lm.summary import case_summary

        return case_summary(rows)

    def headline(self, frame, opts):
        from normbench.benches._lm.summary import training_headline

        return training_headline(frame)


def train_spec(p, **family):
    """The TrainSpec of a case's parameters; `family`: what its model family adds (seq, objective, ...)."""
    same = ("lr", "warmup", "steps", "every", "batch", "data_seed", "schedule", "eval_batches", "optimizer")
    same += ("momentum", "train", "max_tokens")
    return TrainSpec(betas=(p["beta1"], p["beta2"]), **{k: p[k] for k in same}, **family)


def judged(result, rows: list[dict], p) -> CaseResult:
    """A finished run's rows and its status by status_of, with the diverged step as a row."""
    status, reason, step = status_of(result, p)
    if step is not None:
        rows.append({"metric": "diverged_step", "unit": "step", "value": float(step)})
    return CaseResult(rows, status, reason)


def final_rows(result) -> list[dict]:
    """The run's summary rows: held-out and unigram loss, the mean of the last 10 training losses, time, steps."""
    tail = result.losses[-10:]
    return [
        {"metric": "final_loss", "unit": "nats", "value": result.final_loss},
        {"metric": "unigram_loss", "unit": "nats", "value": result.unigram_loss},
        {"metric": "final_train_loss", "unit": "nats", "value": sum(tail) / len(tail)},
        {"metric": "train_wall_s", "unit": "s", "value": result.wall_s},
        {"metric": "steps_run", "unit": "steps", "value": float(len(result.losses))},
    ]


def status_of(result, p) -> tuple[str, str | None, int | None]:
    """(status, reason, diverged step) of one finished run, from its own losses only.

    Blow-up: an lr = 1000 run ends near 3e7 nats, far *above* the unigram loss; `stuck` (at the unigram loss,
    within stuck_tol) would hide it. A held-out loss more than diverge_margin (1 nat by default: a model that
    much worse than symbol frequencies has destroyed what it had) above the unigram loss is a divergence, when
    it is also that much above the lowest training loss the run reached: the loss went *up*. A short or
    low-lr run still near its initial loss (ln V and above) has not blown up; it has not learned yet (stuck)."""
    if result.diverged_at is not None:
        return "diverged", f"loss not finite at step {result.diverged_at}", result.diverged_at
    if not p["judge"]:
        return "ok", None, None
    ceiling = max(result.unigram_loss, min(result.losses)) + p["diverge_margin"]
    if result.final_loss > ceiling:
        step = blow_up_step(result.losses, ceiling)
        return (
            "diverged",
            f"held-out loss {result.final_loss:.4g} > {p['diverge_margin']:g} nats above both the unigram "
            f"model's {result.unigram_loss:.3f} and the run's lowest training loss {min(result.losses):.3f}; "
            f"training loss above that since step {step}",
            step,
        )
    if result.final_loss >= result.unigram_loss - p["stuck_tol"]:
        return (
            "stuck",
            f"held-out loss {result.final_loss:.3f} vs the unigram model's "
            f"{result.unigram_loss:.3f} nats on the same windows (tolerance {p['stuck_tol']:g})",
            None,
        )
    return "ok", None, None


def blow_up_step(losses: list[float], ceiling: float) -> int:
    """The first step of the final stretch of training losses above `ceiling` (1 if it never was below)."""
    below = [i for i, v in enumerate(losses, start=1) if v <= ceiling]
    return below[-1] + 1 if below and below[-1] < len(losses) else (1 if not below else len(losses))
