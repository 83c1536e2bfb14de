"""The positive control for the BatchNorm-vs-LayerNorm question: a small CNN (models/cnn.py) trained on
generated shape images (data/images.py), a bench in which BatchNorm can win as well as lose (Ba et al.
2016, §6.7; Shen et al. 2020, Fig. 2); `model = "mlp"` trains the LN paper's permutation-invariant MLP
(§6.6, models/mlp.py) on the same images instead. One case = one training run; the papers' findings and
what a case stores: docs/methodology.md, "The CNN control"."""

from __future__ import annotations

from normbench.benches._tensors import check_device
from normbench.benches.base import Bench, CaseResult, register_bench
from normbench.core.params import Param
from normbench.core.tolerance import training_tolerance
from normbench.data.images import shapes_data
from normbench.norms import get_norm


@register_bench
class CNN(Bench):
    kind = "cnn"
    description = (
        "a small CNN on generated shape images: held-out loss and accuracy per norm (BN vs LN control)"
    )
    all_impls_by_default = False  # a norm's model implementation, as in the Transformer benches
    labels = {"layer": int, "site": str}
    compare_metrics = {"final_loss": "lower", "accuracy": "higher"}

    def compare_tolerance(self, metric, params):
        return training_tolerance(params.get("steps") or 1)

    params = {
        "model": Param(
            str,
            "cnn",
            choices=("cnn", "mlp"),
            help="cnn: the small CNN; mlp: the LN paper's MLP (§6.6) on the flattened images",
            hashed_at_default=False,  # added after cnn cases were stored: their ids stay
        ),
        "hidden": Param(
            int,
            1000,
            minimum=1,
            help="mlp: units per hidden layer (the paper's 1000)",
            hashed_at_default=False,
        ),
        "width": Param(int, 8, minimum=1, help="cnn: channels of the first stage (×2, ×4 after)"),
        "batch": Param(int, 64, minimum=2, help="images per batch"),
        "steps": Param(int, 500, minimum=1, help="optimizer updates"),
        "lr": Param(float, 0.05, exclusive_minimum=0.0, help="peak learning rate"),
        "optimizer": Param(str, "sgd", choices=("sgd", "adam"), help="sgd (momentum) or adam"),
        "momentum": Param(float, 0.9, minimum=0.0, help="sgd momentum"),
        "warmup": Param(int, 0, minimum=0, help="linear lr warm-up steps"),
        "train_images": Param(int, 8192, minimum=64, help="generated training images"),
        "held_out_images": Param(int, 1024, minimum=16, help="generated held-out images"),
        "every": Param(int, 10, minimum=1, help="batch-statistics rows every k steps"),
        "eps": Param(float, 1e-5, exclusive_minimum=0.0, help="the norm's epsilon"),
        "seed": Param(int, 0, help="seeds the model's initialization"),
        "data_seed": Param(
            int, 1234, help="seeds the images and the batch order: the same for every model seed"
        ),
        "device": Param(str, "cpu", choices=("cpu", "cuda")),
    }

    def check_case(self, params, norm, impl):
        if norm is None:
            return [("norms", "the cnn bench trains a norm: name one (identity = no norm)")]
        registered = get_norm(norm)
        if norm != "identity" and (impl or registered.module_impl) is None:
            return [("norms", f"{norm} has no nn.Module implementation to put in a model")]
        return []

    def run_case(self, case, ctx):
        from normbench.benches._cnn.training import train_cnn

        p = case.params
        check_device(p["device"])
        key = ("images", p["data_seed"], p["train_images"], p["held_out_images"])
        if key not in ctx.memo:
            ctx.memo[key] = shapes_data(p["data_seed"], p["train_images"], p["held_out_images"])
        result = train_cnn(case.norm, case.impl, ctx.memo[key], p)
        return CaseResult(result.rows, result.status, result.reason)

    def headline(self, rows, opts):
        from normbench.benches._cnn.report import cnn_headline

        return cnn_headline(rows)

    def report(self, frame, opts):
        from normbench.benches._cnn.report import cnn_tables

        return cnn_tables(frame)

    def per_case(self, rows):
        from normbench.benches._cnn.report import cnn_runs

        return cnn_runs(rows)
