"""What several analyses read the same way: one bench kind's rows with its own column types, and the
stability bench's training runs (one row per case), their configuration keys and the norms' order."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from normbench.benches import get_bench
from normbench.norms import variant_label
from normbench.results.schema import FIXED_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

FIXED = set(FIXED_COLUMNS)

NORM_ORDER = ("layernorm", "rmsnorm", "dyt", "batchnorm", "powernorm")
# bookkeeping parameters: they never tell two training configurations apart (trade-off table, claims)
NOT_A_CONFIG = ("seed", "every", "eval_batches", "judge", "stuck_tol", "diverge_margin", "device")


def bench_rows(frame: pd.DataFrame, bench) -> pd.DataFrame:
    """One bench kind's rows with its own column types: other kinds' parameter columns (all null here)
    dropped, and integer parameters back to integers (a concat with rows lacking them made them float)."""
    rows = frame[frame["bench"] == bench.kind]
    rows = rows.drop(columns=[c for c in rows.columns if c not in FIXED and rows[c].isna().all()])
    for key, spec in bench.params.items():
        if spec.type is int and key in rows and rows[key].dtype.kind == "f":
            rows = rows.assign(**{key: rows[key].astype("Int64")})
    return rows


def stability_runs(frame: pd.DataFrame, kind: str = "stability") -> pd.DataFrame:
    """One row per training run of one bench kind (stability: the decoder-only / masked LM, what every claim
    but the encoder-decoder ones reads; encdec): every parameter of the case, its norm (`norm:impl` where the
    model ran a named implementation other than the norm's own module, e.g. powernorm:official), stored
    status and summary numbers (final loss, unigram loss, step-1 update, last-LN input norm / √d at the last
    diagnostic step, top block gradient at step 1)."""
    import pandas as pd

    if kind not in set(frame["bench"].unique()):
        return pd.DataFrame()
    bench = get_bench(kind)
    rows = bench_rows(frame, bench)
    rows = rows[~rows["status"].isin(["failed", "skipped", "unavailable"])]
    if rows.empty:
        return pd.DataFrame()
    cases = rows.drop_duplicates("case_id")
    params = pd.DataFrame([json.loads(p) for p in cases["params"]], index=cases.index)
    params = params.assign(case_id=cases["case_id"].to_numpy(), norm=_variant_names(cases))
    if "objective" not in params:
        params["objective"] = "causal"
    params["objective"] = params["objective"].fillna("causal")
    grads = rows[(rows["metric"] == "grad_norm") & (rows["step"] == 1) & (rows["site"] == "block")]
    top = grads[grads["layer"] == grads["depth"]].groupby("case_id")["value"].first().rename("top_grad1")
    out = bench.per_case(rows).merge(params, on="case_id").merge(top, on="case_id", how="left")
    return out.assign(last_ln_rel=out["last_ln"] / out["d"].astype(float).map(math.sqrt))


def _variant_names(cases: pd.DataFrame) -> list[str]:
    """The norm of each case, as `norm:impl` when the impl is not the one a model gets by default."""
    impls = cases["impl"] if "impl" in cases else [None] * len(cases)
    return [variant_label(n, i) for n, i in zip(cases["norm"], impls, strict=True)]


def training_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per stability training run (judged, more than one step): stability_runs' summary, which
    carries the norm (norm:impl for a named implementation) and every parameter of the case."""
    runs = stability_runs(frame)
    if runs.empty:
        return runs
    return runs[runs["judge"].astype(bool) & (runs["steps"] > 1)]


def config_keys(runs: pd.DataFrame) -> list[str]:
    """norm, then every case parameter that differs between the training runs (placement, objective ...)."""
    keys = [
        c
        for c in runs.columns
        if c in training_param_names() and c not in NOT_A_CONFIG and runs[c].astype(str).nunique() > 1
    ]
    order = ["placement", "objective", *_stability().key_order]
    keys.sort(key=lambda k: (k == "depth", order.index(k) if k in order else len(order), k))
    return ["norm", *keys]


def _stability():
    return get_bench("stability")


def stability_param_names() -> set[str]:
    return set(_stability().params)


def training_param_names() -> set[str]:
    """The parameters of the training benches (the LM's and the encoder-decoder's)."""
    return stability_param_names() | set(get_bench("encdec").params)


def norm_sort_key(name) -> tuple[int, str]:
    return (NORM_ORDER.index(name) if name in NORM_ORDER else len(NORM_ORDER), str(name))
