"""One Jacobian case's measurements into checks and rows: does the input's statistics fit the dtype, does
σ_max agree with an exact closed form, which method the case uses, and the per-input rows it stores."""

from __future__ import annotations

SVD_DTYPES = ("fp64", "fp32")  # torch.linalg.svdvals has no half-precision kernels


EXTRA_UNITS = {
    "coupling": "ratio",
    "coupling_entry": "ratio",
    "cross_channel_max": "1",
    "channel_rel_err_max": "ratio",
    "coupling_converged": "bool",
    "coupling_time": "s",
}


def check_statistics_fit(xs, dtype: str, layout: str, eps: float | None = None) -> None:
    """Refuse inputs whose statistics overflow the case's dtype (x² beyond fp32's 3.4e38 at |x| > 1.8e19):
    the norm then divides inf by inf, and its Jacobian is garbage that no ε explains. At eps = 0, also
    those whose Σx² underflows to 0 (x² below the dtype's smallest subnormal): the norm divides 0 by 0."""
    import torch

    finfo = torch.finfo(xs.dtype)
    biggest = float(xs.abs().max()) if xs.numel() else 0.0
    if not bool(torch.isfinite(xs).all()):
        raise FloatingPointError(
            f"the inputs overflow {dtype} (max {finfo.max:.2g}): lower scale/mean/outlier or use fp64"
        )
    squares = (xs * xs).sum(dim=-2 if layout == "batch" else -1)
    if not bool(torch.isfinite(squares).all()):
        raise FloatingPointError(
            f"the input's statistics overflow {dtype}: Σx² is inf (largest |x| = {biggest:.2g}, {dtype} max "
            f"{finfo.max:.2g}); lower scale/mean/outlier or use fp64"
        )
    if eps == 0 and bool((squares == 0).any()):
        raise FloatingPointError(
            f"at eps = 0 the input's statistics underflow {dtype}: Σx² is 0 (largest |x| = {biggest:.2g}, "
            f"{dtype}'s smallest normal {finfo.tiny:.2g}), so the norm divides 0 by 0; raise scale or eps, "
            f"or use {'fp64' if dtype == 'fp32' else 'fp32/fp64'}"
        )


def closed_form_disagreement(sigma: list[float], closed, tol: float, dtype: str) -> str | None:
    """None when every measured σ_max is within `tol` (relative) of its exact closed form, else the worst
    input with both numbers."""
    errors = [abs(rel_err(s, float(c))) for s, c in zip(sigma, closed, strict=True)]
    bad = [k for k, e in enumerate(errors) if not e <= tol]
    if not bad:
        return None
    k = max(bad, key=lambda i: errors[i] if errors[i] == errors[i] else float("inf"))
    return (
        f"measured σ_max {sigma[k]:.3g} disagrees with its closed form {float(closed[k]):.3g} "
        f"(relative error {errors[k]:.2g} > {tol:g} allowed in {dtype}) on {len(bad)} of {len(sigma)} inputs"
    )


def jacobian_side(p, layout: str) -> int:
    """Rows of the Jacobian of one input: d, or batch·d for a whole BatchNorm-train batch."""
    return p["d"] * p["batch"] if layout == "batch" else p["d"]


def resolve_method(p, layout: str) -> str:
    if p["method"] != "auto":
        return p["method"]
    fits = jacobian_side(p, layout) <= p["exact_limit"] and p["dtype"] in SVD_DTYPES
    return "exact" if fits else "matrix_free"


def rel_err(measured: float, closed: float) -> float:
    """(measured − closed)/closed; when the closed form is 0, 0 if the measurement is 0 too, else ±inf."""
    if closed != 0:
        return (measured - closed) / closed
    return 0.0 if measured == 0 else float("inf") if measured > 0 else float("-inf")


def max_rel_err(measured, closed) -> float:
    return max(abs(rel_err(float(m), float(c))) for m, c in zip(measured, closed, strict=True))


def input_rows(measured, closed, bounds, extras, slack: float) -> list[dict]:
    rows = []
    for k, sigma in enumerate(measured.sigma):
        xiong, centred = float(bounds["xiong"][k]), float(bounds["centred"][k])
        r_x, r_c = sigma / xiong, sigma / centred  # a zero-norm input gives an infinite bound: ratio 0
        values = {"sigma_max": (sigma, "1")}
        if closed is not None:  # a norm without a closed form: measured against the bounds only
            cf = float(closed.value[k])
            values |= {"closed_form": (cf, "1"), "rel_err": (rel_err(sigma, cf), "ratio")}
        values |= {
            "xiong_bound": (xiong, "1"),
            "centred_bound": (centred, "1"),
            "ratio_xiong": (r_x, "ratio"),
            "ratio_centred": (r_c, "ratio"),
            "bound_held": (float(r_x <= 1 + slack), "bool"),
            "centred_held": (float(r_c <= 1 + slack), "bool"),
            "inflation": (float(bounds["inflation"][k]), "ratio"),
            "iterations": (float(measured.iterations[k]), "iterations"),
            "converged": (float(measured.converged[k]), "bool"),
            "time": (measured.seconds[k], "s"),
        }
        for name, v in extras.get(k, {}).items():
            values[name] = (v, EXTRA_UNITS[name])
        rows += [
            {"metric": name, "unit": unit, "value": float(v), "sample": k}
            for name, (v, unit) in values.items()
        ]
    return rows
