"""Synthetic rows in the shape the stability, block and init benches store (the contracts
between the model side, the norm side and the analysis side), with numbers the tests choose."""

from __future__ import annotations

import json

import pandas as pd

BLOCK_SHAPE = {"device": "cpu", "dtype": "fp32", "cache": "warm", "stat": "median", "tokens": 1024}


def _case(bench, norm, params, status="ok", impl="module"):
    case_id = json.dumps({"bench": bench, "norm": norm, "impl": impl, **params}, sort_keys=True)
    return {
        "bench": bench,
        "norm": norm,
        "impl": impl,
        "status": status,
        "error": None,
        "case_id": case_id,
        "params": json.dumps(params),
        "sample": None,
        "step": None,
        **params,
    }


def training_run(
    norm,
    seed,
    loss,
    *,
    placement="pre",
    objective="masked",
    depth=6,
    status=None,
    unigram=3.0,
    fluctuation=None,
    steps=300,
    batching=None,
    data=None,
):
    """The rows of one stability training run; `fluctuation`: {(layer, site): {metric: [value per step]}}
    stored at steps 10, 20, ...; norm "name:impl" runs that implementation (powernorm:official). Masked runs
    are on padded batches of sentences (the BatchNorm claims' setting) unless `batching` says otherwise."""
    norm, _, impl = norm.partition(":")
    params = {
        "placement": placement,
        "objective": objective,
        "init": "xavier",
        "warmup_calls": 0,
        "depth": depth,
        "seed": seed,
        "lr": 1e-3,
        "d": 64,
        "steps": steps,
        "judge": True,
        "batching": batching or ("padded" if objective == "masked" else "windows"),
    }
    if data is not None:
        params["data"] = data
    status = status or ("stuck" if loss >= unigram - 0.1 else "ok")
    base = _case("stability", norm, params, status, impl or "module")
    rows = [
        {"metric": "final_loss", "value": loss},
        {"metric": "unigram_loss", "value": unigram},
        {"metric": "model_update", "value": 1.0, "step": 1},
        {"metric": "last_ln_input_norm", "value": 9.0, "step": steps},
        {"metric": "grad_norm", "value": 1.0, "step": 1, "site": "block", "layer": depth},
    ]
    for (layer, site), metrics in (fluctuation or {}).items():
        for metric, values in metrics.items():
            rows += [
                {"metric": metric, "value": v, "step": 10 * (i + 1), "layer": layer, "site": site}
                for i, v in enumerate(values)
            ]
    return [{**base, **r} for r in rows]


def block_case(block, time, over, linear, d=64, tokens=1024):
    params = {**BLOCK_SHAPE, "tokens": tokens, "block": block, "d": d}
    base = _case("block", None, params)
    rows = [
        {"metric": "time_median", "value": time},
        {"metric": "over_linear", "value": over},
        {"metric": "linear_time_median", "value": linear},
    ]
    return [{**base, **r} for r in rows]


def scale_case(norm, seed, ratios: dict[float, float]):
    """Init rows of scale_grad_ratio: {c: measured ratio}."""
    base = _case("init", norm, {"placement": "pre", "objective": "masked", "depth": 2, "seed": seed})
    return [{**base, "metric": "scale_grad_ratio", "value": r, "scale": c} for c, r in ratios.items()]


def frame(*row_lists) -> pd.DataFrame:
    return pd.DataFrame([r for rows in row_lists for r in rows])
