"""Training stability of a small decoder-only LM: Post-LN vs Pre-LN vs DeepNorm (and sandwich), with
DeepNet's control groups (Post-LN with and without warmup, Post-LN-init = 1/k_l with warmup), in CPU minutes.
model = "encdec": the same runs in an encoder-decoder on a generated translation-like task (models/encdec.py,
data/seq2seq.py, _stability/encdec_*.py), with the model update and the norm inputs split by side.

Details: docs/methodology.md, "Notes from the code"."""

from __future__ import annotations

from normbench.benches._lm import MODEL_PARAMS, LMBench, data_rows, norm_mixes_tokens
from normbench.benches._stability.encdec_params import (
    ENCDEC_PARAMS,
    encdec_problems,
    lm_problems,
    pairs_identity,
)
from normbench.benches._stability.headline import stability_headline
from normbench.benches.base import CaseResult, register_bench
from normbench.core.params import Param
from normbench.core.tolerance import training_tolerance

SCHEDULES = ("constant", "inverse_sqrt")  # also in _lm/training.py (which imports torch)
BATCHINGS = ("windows", "padded", "bucketed")  # data/padded.py
SEGMENTS = ("sentence", "line")  # data/segments.py
OPTIMIZERS = ("adam", "sgd")
# which parameters the optimizer updates (the rest stay at their init); _lm/training.py `trainable`
TRAIN_GROUPS = ("all", "beta_scaled", "weights", "norm_affine", "biases", "embeddings")


def _decay(value: float) -> str | None:
    return None if 0.0 <= value < 1.0 else f"{value!r} must be in [0, 1)"


@register_bench
class Stability(LMBench):
    kind = "stability"
    description = (
        "short LM training runs: final loss, divergence, model update, norm input growth per placement/init"
    )
    compare_metrics = {"final_loss": "lower"}  # pooled over seeds by `normbench compare`

    def compare_tolerance(self, metric, params):
        # fp32 training: a last-bit difference between CPUs is carried forward by every optimizer step

        return training_tolerance(params.get("steps") or 1)

    params = {
        **MODEL_PARAMS,
        **ENCDEC_PARAMS,  # model = "encdec": the encoder-decoder (_stability/encdec_*.py)
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
        "batching": Param(
            str,
            "windows",
            choices=BATCHINGS,
            hashed_at_default=False,
            help="windows = random fixed-length windows of the text; padded = whole sentences or lines "
            "(segment), padded to the batch's longest, the pads masked in attention, loss and batch "
            "statistics; bucketed = the same, batches of similar length (fairseq's length order)",
        ),
        "segment": Param(
            str,
            "sentence",
            choices=SEGMENTS,
            hashed_at_default=False,
            help="padded/bucketed: the units, sentence (lines, also split after . ? ! and a space) or line",
        ),
        "max_tokens": Param(
            int,
            0,
            minimum=0,
            hashed_at_default=False,
            help="padded/bucketed: 0 = `batch` units a batch; else a token budget as fairseq's --max-tokens "
            "(as many units as fit rows x longest <= max_tokens; `batch` unused)",
        ),
        "warmup": Param(int, 0, minimum=0, help="linear warmup steps (0 = none)"),
        "schedule": Param(str, "constant", choices=SCHEDULES, help="after warmup: constant or inverse_sqrt"),
        "steps": Param(int, 300, minimum=1, help="optimizer updates"),
        "every": Param(int, 10, minimum=1, help="diagnostics every k steps (and at steps 1 and the last)"),
        "eval_batches": Param(int, 16, minimum=1, help="held-out batches for the final loss"),
        "stuck_tol": Param(
            float, 0.1, minimum=0.0, help="stuck when final loss >= unigram loss - this (nats)"
        ),
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

    def run_case(self, case, ctx):
        from normbench.benches._lm.training import TrainSpec, train

        p = case.params
        if p["model"] == "encdec":
            return run_encdec(case, ctx)
        model, data = self.model_and_data(case, ctx)
        spec = TrainSpec(
            lr=p["lr"],
            warmup=p["warmup"],
            steps=p["steps"],
            every=p["every"],
            batch=p["batch"],
            seq=p["seq"],
            data_seed=p["data_seed"],
            schedule=p["schedule"],
            eval_batches=p["eval_batches"],
            objective=p["objective"],
            mask_prob=p["mask_prob"],
            optimizer=p["optimizer"],
            betas=(p["beta1"], p["beta2"]),
            momentum=p["momentum"],
            train=p["train"],
            batching=p["batching"],
            segment=p["segment"],
            max_tokens=p["max_tokens"],
        )
        result = train(model, data, spec, p["device"])
        tail = result.losses[-10:]
        rows = (
            result.rows
            + data_rows(data)
            + [
                {"metric": "final_loss", "unit": "nats", "value": result.final_loss},
                {"metric": "unigram_loss", "unit": "nats", "value": result.unigram_loss},
                {"metric": "final_train_loss", "unit": "nats", "value": sum(tail) / len(tail)},
                {"metric": "train_wall_s", "unit": "s", "value": result.wall_s},
                {"metric": "steps_run", "unit": "steps", "value": float(len(result.losses))},
            ]
        )
        status, reason, step = status_of(result, p)
        if step is not None:
            rows.append({"metric": "diverged_step", "unit": "step", "value": float(step)})
        return CaseResult(rows, status, reason)

    def headline(self, frame, opts):
        return stability_headline(frame, opts)

    def identity(self, params):
        if params["model"] == "encdec":  # generated pairs, not the corpus
            return {"data": pairs_identity(params)}
        return super().identity(params)

    def check_case(self, params, norm, impl):
        if params["model"] == "encdec":
            problems = encdec_problems(
                params, self.params, norm is not None and norm_mixes_tokens(norm), norm
            )
        else:
            problems = super().check_case(params, norm, impl) + lm_problems(params, self.params)
        if params["optimizer"] == "adam" and params["momentum"] != 0:
            problems.append(("momentum", 'momentum is an SGD setting; with optimizer = "adam" use beta1'))
        if params["optimizer"] == "sgd" and (params["beta1"], params["beta2"]) != (0.9, 0.98):
            problems.append(("beta1", 'beta1/beta2 are Adam settings; with optimizer = "sgd" use momentum'))
        return problems + (padding_problems(params, norm) if params["model"] != "encdec" else [])

    def report(self, frame, opts):
        from normbench.benches._stability.encdec_tables import encdec_tables
        from normbench.benches._stability.tables import stability_tables

        return stability_tables(frame) + encdec_tables(frame)

    def per_case(self, rows):
        from normbench.benches._stability.tables import case_summary

        return case_summary(rows)


def padding_problems(params, norm) -> list[tuple[str, str]]:
    """Padded batching needs a text to cut into units, and a placement whose every norm gets the pad mask."""
    if params["batching"] == "windows":
        if params["max_tokens"]:
            return [
                ("max_tokens", 'a token budget batches whole units; set batching = "padded" or "bucketed"')
            ]
        if params["segment"] != "sentence":
            return [
                (
                    "segment",
                    'segment chooses the units of padded batches; set batching = "padded" or "bucketed"',
                )
            ]
        return []
    if params["data"] == "markov":
        return [
            (
                "batching",
                f'batching = "{params["batching"]}" cuts a text into sentences or lines; the Markov '
                'chain has none (use data = "text", "code", "stdlib" or "mix")',
            )
        ]
    longest = params["seq"] + (params["objective"] == "causal")  # _lm/batches.py unit_length
    if 0 < params["max_tokens"] < longest:
        return [("max_tokens", f"{params['max_tokens']} tokens cannot hold a unit of {longest} tokens")]
    if params["placement"] == "subln" and norm is not None and norm_mixes_tokens(norm):
        return [
            (
                "placement",
                "Sub-LN's inner norms get no pad mask, so batch statistics would count the "
                'padding; use another placement or batching = "windows"',
            )
        ]
    return []


def run_encdec(case, ctx) -> CaseResult:
    """An encoder-decoder case: the same status rule on its held-out target tokens."""
    from normbench.benches._stability.encdec_case import train_case

    result, rows = train_case(case, ctx)
    status, reason, step = status_of(result, case.params)
    if step is not None:
        rows.append({"metric": "diverged_step", "unit": "step", "value": float(step)})
    return CaseResult(rows, status, reason)


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
