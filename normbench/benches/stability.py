"""Training stability of a small decoder-only LM: Post-LN vs Pre-LN vs DeepNorm (and sandwich), with
DeepNet's control groups (Post-LN with and without warmup, Post-LN-init = 1/k_l with warmup), in CPU minutes.

One case = one training run (placement x norm x init x depth x lr x warmup x seed). Stored status, what one
run alone can know (see `status_of`): diverged (a non-finite loss, or a held-out loss more than
`diverge_margin` nats above both the unigram model's and the run's lowest training loss: it blew up, with
the step where the training loss last left that band); stuck (held-out loss within `stuck_tol` nats of the unigram model's loss on the same
held-out windows: it learned no more than symbol frequencies); else ok. `not_converged` (>= 0.3 nats behind a
named reference run at the same seed and depth) needs a second case, so it is judged at report/claim time
(analysis/claims/_stats.py `not_converged`), never stored. Time series (loss
every step; lr, gradient norms, model update and norm inputs every `every` steps) carry a `step` column,
per-layer values a `layer` and `site` column. objective = "masked": every loss (training, held-out, the
unigram model's) is over the masked positions, so the judgements compare like with like. Norms with batch
statistics also store the batch-vs-running fluctuation rows (_lm/fluctuation.py). See _lm/training.py for the loop, _lm/__init__.py for the model params."""

from __future__ import annotations

from typing import TYPE_CHECKING

from normbench.benches._lm import MODEL_PARAMS, LMBench, varying_keys
from normbench.benches.base import CaseResult, register_bench
from normbench.core.params import Param

if TYPE_CHECKING:  # pandas (behind Table) is imported by the report, not by validating a suite
    from normbench.core.tables import Table

SCHEDULES = ("constant", "inverse_sqrt")  # also in _lm/training.py (which imports torch)
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
        from normbench.core.tolerance import training_tolerance

        return training_tolerance(params.get("steps") or 1)

    params = {
        **MODEL_PARAMS,
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
        from normbench.benches._lm import data_rows
        from normbench.benches._lm.training import TrainSpec, train

        p = case.params
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
        from normbench.benches._lm.headline import stability_headline

        return stability_headline(frame, opts)

    def check_case(self, params, norm, impl):
        problems = super().check_case(params, norm, impl)
        if params["optimizer"] == "adam" and params["momentum"] != 0:
            problems.append(("momentum", 'momentum is an SGD setting; with optimizer = "adam" use beta1'))
        if params["optimizer"] == "sgd" and (params["beta1"], params["beta2"]) != (0.9, 0.98):
            problems.append(("beta1", 'beta1/beta2 are Adam settings; with optimizer = "sgd" use momentum'))
        return problems

    def report(self, frame, opts):
        return stability_tables(frame)

    def per_case(self, rows):
        return case_summary(rows)


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


def case_summary(frame):
    """One row per case: status, final loss, unigram entropy, step-1 model update, last-LN input norm at the
    last diagnostic step, training time."""
    import pandas as pd

    def metric_mean(rows, metric):
        return rows.loc[rows["metric"] == metric, "value"].mean()  # NaN when absent

    out = []
    for case_id, rows in frame.groupby("case_id", sort=False):
        last_ln = rows[rows["metric"] == "last_ln_input_norm"].sort_values("step")
        update = rows[(rows["metric"] == "model_update") & (rows["step"] == 1)]["value"]
        out.append(
            {
                "case_id": case_id,
                "status": rows["status"].iloc[0],
                **{
                    key: metric_mean(rows, metric)
                    for key, metric in [
                        ("final_loss", "final_loss"),
                        ("train_loss", "final_train_loss"),
                        ("unigram", "unigram_entropy"),
                        ("unigram_loss", "unigram_loss"),
                        ("optimal", "optimal_loss"),
                        ("wall", "case_wall_s"),
                    ]
                },
                "update1": update.mean(),
                "last_ln": last_ln["value"].iloc[-1] if len(last_ln) else float("nan"),
            }
        )
    return pd.DataFrame(out)


def stability_tables(frame) -> list[Table]:
    import math

    import pandas as pd

    from normbench.core.tables import Table
    from normbench.norms import variant_label

    frame = frame[frame["status"].isin(["ok", "stuck", "diverged"])]
    if frame.empty:
        return []
    if "impl" in frame:  # powernorm:official is its own row, not pooled with Algorithm 1
        labels = {
            (n, i): variant_label(n, i)
            for n, i in frame[["norm", "impl"]].drop_duplicates().itertuples(index=False)
        }
        frame = frame.assign(norm=[labels[k] for k in zip(frame["norm"], frame["impl"], strict=True)])
    # eval_batches, judge: settings of the one-step update runs, which steps = 1 already tells apart
    keys = varying_keys(frame, exclude=("seed", "eval_batches", "judge")) or ["depth"]
    cases = frame.drop_duplicates("case_id")[["case_id", *dict.fromkeys([*keys, "d"])]]
    summary = case_summary(frame).merge(cases, on="case_id")
    table = []
    for key, g in summary.groupby(keys, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        counts = g["status"].value_counts()
        row = dict(zip(keys, key, strict=True))
        sd = g["final_loss"].std()
        row.update(
            {
                "runs": len(g),
                "status": ", ".join(f"{s} {counts[s]}" for s in ("ok", "stuck", "diverged") if s in counts),
                "final loss": f"{g['final_loss'].mean():.3f}"
                + (f" ±{sd:.3f}" if len(g) > 1 and not math.isnan(sd) else ""),
                "train loss": f"{g['train_loss'].mean():.3f}",
                "unigram − loss": f"{(g['unigram_loss'] - g['final_loss']).mean():.3f}",
                "step-1 update": f"{g['update1'].mean():.3g}",
                "last-LN ‖x‖/√d": f"{(g['last_ln'] / g['d'].map(math.sqrt)).mean():.2f}",
                "s/run": f"{g['wall'].mean():.1f}",
            }
        )
        table.append(row)
    unigram = summary["unigram"].dropna().unique()
    notes = [
        "final loss: held-out loss after training, mean ±sd over seeds (nats/token); train loss: mean of the "
        "last 10 training losses; status counts over seeds.",
        f"unigram entropy of the training text: {', '.join(f'{u:.3f}' for u in unigram)} nats; unigram − loss: the "
        "unigram model's loss on the same held-out windows minus the final loss; stuck when it is < stuck_tol.",
        "step-1 update: mean over probe tokens of ‖F(x,θ₁) − F(x,θ₀)‖₂, F = the head's input (DeepNet Fig. 4a).",
        "last-LN ‖x‖/√d: input norm of the norm feeding the head, at the last diagnostic step, over √d (DeepNet Fig. 4b).",
    ]
    if summary["optimal"].notna().any():
        notes.append(f"optimal loss (Markov entropy rate): {summary['optimal'].dropna().iloc[0]:.3f} nats.")
    tables = [
        Table(
            "Stability: final loss, status, step-1 model update, last-LN input norm",
            pd.DataFrame(table),
            notes,
        )
    ]
    tables.append(early_table(frame, keys))
    if "depth" in keys and len(keys) > 1:
        other = [k for k in keys if k != "depth"]
        wide = summary.groupby([*other, "depth"], dropna=False)["final_loss"].mean().unstack("depth")
        wide.columns = [f"L={c}" for c in wide.columns]
        tables.append(Table("Stability: mean final loss by depth", wide.round(3).reset_index().astype(str)))
    return tables


def early_table(frame, keys) -> Table:
    """The model update at a few steps (DeepNet Fig. 4a: Post-LN's explodes at once, then barely moves) and
    the top block's gradient norm at step 1 (Fig. 3a), means over seeds."""
    import pandas as pd

    from normbench.core.tables import Table

    updates = frame[frame["metric"] == "model_update"]
    last = int(updates["step"].max())
    steps = [s for s in (1, 10, 50, 100) if s < last and s in set(updates["step"])] + [last]
    upd = updates[updates["step"].isin(steps)].pivot_table(
        index=keys, columns="step", values="value", aggfunc="mean"
    )
    upd.columns = [f"update @{int(c)}" for c in upd.columns]
    grads = frame[(frame["metric"] == "grad_norm") & (frame["step"] == 1) & (frame["site"] == "block")]
    top = grads[grads["layer"] == grads["depth"]].groupby(keys)["value"].mean().rename("top block grad @1")
    cells = pd.concat([upd, top], axis=1).map(lambda v: f"{v:.3g}")
    return Table(
        "Stability: model update per token over training, top block gradient at step 1",
        cells.reset_index(),
        [
            "update @t: mean over probe tokens of ‖F(x,θ_t) − F(x,θ₀)‖₂. F is an LN output (‖F‖ ≈ √d per token), so "
            "the update saturates near √(2d) once F no longer resembles F(x,θ₀): step 1 is where placements differ. "
            "top block grad: L2 norm of all gradients of block N at step 1 (DeepNet Fig. 3a, where Post-LN-init has "
            "the larger one)."
        ],
    )
