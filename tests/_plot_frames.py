"""A stored run with rows for every built-in figure, written by hand (no measurement): latency over eight
implementations, four dtype x mode panels, two hidden sizes and one-shape settings (cold cache, hard
inputs); Jacobian points; init profiles; training curves, a stuck phase diagram and batch statistics."""

from __future__ import annotations

import math

from _stores import create_store

from normbench.core.case import Case, case_id

ENV = {"hostname": "h", "cpu": "AMD EPYC 7B13", "cpu_count": 2, "torch": "2.13.0+cpu", "torch_threads": 2}
LATENCY = {  # norm:impl -> time over the reference's: speedups from 0.01x to 40x, as a loaded machine gives
    "layernorm:module": 1.0,
    "layernorm:functional": 0.9,
    "layernorm:composite": 60.0,
    "rmsnorm:module": 4.0,
    "rmsnorm:functional": 0.8,
    "rmsnorm:composite": 0.03,
    "batchnorm:eval": 0.6,
    "batchnorm:train": 1.5,
    "identity:copy": 0.2,
}


def _write(store, kind, norm, impl, params, rows, status="ok"):
    case = Case(kind, norm, impl, params, 0, case_id(kind, norm, impl, params))
    store.write_case(case, rows, status, None)


def _latency(store):
    shapes = [
        {"tokens": 512, "d": d, "dtype": dtype, "mode": mode}
        for d in (256, 1024)
        for dtype in ("fp32", "bf16")
        for mode in ("fwd", "fwd+bwd")
    ]
    one_shape = [{"tokens": 256, "d": 512, "dtype": "fp32", "mode": "fwd", "cache": "cold"}]
    one_shape += [{"tokens": 256, "d": 512, "dtype": "fp32", "mode": "fwd", "input": i} for i in ("lowvar",)]
    for k, shape in enumerate(shapes + one_shape):
        base = 1e-4 * (1 + k) * (4 if shape["mode"] == "fwd+bwd" else 1)
        labels = LATENCY if k < len(shapes) else {"layernorm:module": 1.0, "identity:copy": 0.3}
        for label, ratio in labels.items():
            norm, impl = label.split(":")
            t = base * ratio
            copy = base * 0.2
            rows = [{"metric": m, "unit": "s", "value": t} for m in ("time_median", "time_min")]
            rows += [
                {"metric": "time_iqr", "unit": "s", "value": 0.05 * t},
                {"metric": "time_p20", "unit": "s", "value": 0.95 * t},
                {"metric": "time_p80", "unit": "s", "value": 1.05 * t},
                {"metric": "copy_time_median", "unit": "s", "value": copy},
                {"metric": "copy_time_min", "unit": "s", "value": copy},
                {"metric": "gbps", "unit": "GB/s", "value": 2e-3 * shape["d"] / t},
                {"metric": "copy_gbps", "unit": "GB/s", "value": 2e-3 * shape["d"] / copy},
                {"metric": "copy_fraction", "unit": "ratio", "value": copy / t},
            ]
            for stat, factor in (("median", 1.0), ("lo", 0.95), ("hi", 1.05)):
                rows.append({"metric": f"time_vs_ref_{stat}", "unit": "ratio", "value": ratio * factor})
            for row in rows:
                row["reference"] = "layernorm:module"
            params = {"device": "cpu", "stat": "median", "cache": "warm", "input": "normal", **shape}
            _write(store, "latency", norm, impl, params, rows)


def _jacobian(store):
    for norm in ("layernorm", "rmsnorm"):
        for dist, mean in (("gaussian", 0.0), ("gaussian", 3.0), ("uniform", 0.0)):
            rows = []
            for sample in range(4):
                bound = 10 ** (sample - 1)
                rows += [
                    {"metric": "xiong_bound", "unit": "1", "value": bound, "sample": sample},
                    {"metric": "centred_bound", "unit": "1", "value": bound * 1.1, "sample": sample},
                    {"metric": "sigma_max", "unit": "1", "value": bound * 0.9, "sample": sample},
                ]
            _write(store, "jacobian", norm, "module", {"d": 64, "dist": dist, "mean": mean}, rows)


def _init(store):
    for placement in ("post", "pre"):
        for depth in (4, 8):
            rows = []
            for layer in range(depth + 1):
                rows.append({"metric": "stream_sq_norm", "unit": "1", "value": 1 + layer, "layer": layer})
                grad = 0.1 * (layer + 1) if placement == "post" else 0.5
                rows.append(
                    {
                        "metric": "ffn_grad_norm_of_mean",
                        "unit": "1",
                        "value": grad,
                        "layer": layer,
                        "site": "fc2",
                    }
                )
            params = {"placement": placement, "init": "xavier", "depth": depth}
            _write(store, "init", "layernorm", "module", params, rows)


def _stability(store):
    configs = [
        ("post", "xavier", 0),
        ("pre", "xavier", 0),
        ("deepnorm", "deepnorm", 0),
        ("post", "xavier", 4),
    ]
    for placement, init, warmup in configs:
        for depth in (4, 8):
            for seed in (0, 1):
                rows = [{"metric": "unigram_loss", "unit": "nats", "value": 3.0}]
                for step in range(0, 41, 10):
                    loss = 3.0 - (0.0 if placement == "post" else 0.02 * step) - 0.01 * seed
                    rows.append({"metric": "loss", "unit": "nats", "value": loss, "step": step})
                    rows.append(
                        {"metric": "model_update", "unit": "1", "value": 0.1 * (step + 1), "step": step}
                    )
                for step in range(0, 41, 10):
                    for layer in range(2):
                        for metric in ("bn_mean_rel_dist", "bn_var_rel_dist", "bn_mean_rel_dist_iid"):
                            value = 0.1 + 0.01 * step + 0.05 * layer
                            rows.append(
                                {"metric": metric, "unit": "1", "value": value, "step": step}
                                | {"layer": layer, "site": "norm1"}
                            )
                params = {
                    "placement": placement,
                    "init": init,
                    "warmup": warmup,
                    "depth": depth,
                    "seed": seed,
                    "steps": 40,
                    "lr": 1e-3,
                    "judge": True,
                }
                status = "stuck" if placement == "post" and warmup == 0 and depth == 8 else "ok"
                _write(store, "stability", "layernorm", "module", params, rows, status)
    for lr in (3e-4, 1e-3, 3e-3):  # the phase diagram: Post-LN one-step runs at three learning rates
        for depth in (4, 8, 16):
            stuck = math.log10(lr) + depth / 8 > -1.5
            params = {"placement": "post", "init": "xavier", "warmup": 0, "depth": depth, "seed": 0}
            params |= {"steps": 1, "lr": lr, "judge": True}
            rows = [{"metric": "final_loss", "unit": "nats", "value": 3.0}]
            _write(store, "stability", "layernorm", "module", params, rows, "stuck" if stuck else "ok")


def every_figure_run(results) -> None:
    """Run "figs" under `results`, with rows every built-in plot draws."""
    store = create_store(results, {"run_id": "figs", "suite": "figs", "env": ENV})
    _latency(store)
    _jacobian(store)
    _init(store)
    _stability(store)
