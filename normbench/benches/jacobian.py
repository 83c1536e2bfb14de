"""σ_max of a normalizer's Jacobian, measured (dense jacrev + SVD, or matrix-free Lanczos on JᵀJ) against
its closed form and against Xiong et al.'s √d/‖x‖ (Lemma 3) and the centred √d/‖x − mean‖.

Details: docs/methodology.md, "Jacobian bounds"."""

from __future__ import annotations

from normbench.benches._jacobian.inputs import DISTS, make_inputs
from normbench.benches._jacobian.predictions import formula_for, formulas, xiong_bounds
from normbench.benches._jacobian.rows import (
    SVD_DTYPES,
    check_statistics_fit,
    closed_form_disagreement,
    input_rows,
    jacobian_side,
    max_rel_err,
    resolve_method,
)
from normbench.benches._tensors import DTYPES, check_device
from normbench.benches.base import Bench, CaseResult, register_bench
from normbench.core.params import Param
from normbench.core.tolerance import Tolerance, ulps_tolerance

MACHINE_EPS = {"fp64": 2.22e-16, "fp32": 1.19e-7, "bf16": 7.81e-3, "fp16": 9.77e-4}
TOL_FLOOR = 4  # Lanczos cannot resolve a relative residual below a few machine epsilons
# measured/bound counts as "held" up to rounding in the case's dtype (the ε = 0 equality cases land on 1)
HELD_SLACK = {"fp64": 1e-12, "fp32": 1e-5, "bf16": 1e-2, "fp16": 1e-3}
# A measured σ_max farther than this (relative) from an exact closed form is a failed case, not a result:
# suites/jacobian.toml's worst cases were 8.4e-11 (fp64) and 5.7e-6 (fp32), so these leave >= 100x margin;
# matrix_free may be off by its own tol (10·tol allowed). bf16/fp16: ~30 ulps.
CLOSED_FORM_TOL = {"fp64": 1e-8, "fp32": 1e-3, "fp16": 3e-2, "bf16": 2.5e-1}


def _below_one(v: float) -> str | None:
    return "must be < 1" if v >= 1 else None


@register_bench
class Jacobian(Bench):
    kind = "jacobian"
    description = "σ_max of the Jacobian vs its closed form and Xiong's √d/‖x‖ bound, per input distribution"
    all_impls_by_default = False  # the closed form is the norm's, not the kernel's: baseline impl only
    # compare: |measured − closed form| / closed form per input (seeded, so the same inputs in both runs)
    compare_metrics = {"rel_err": "lower_abs"}
    compare_pool = ()
    labels = {"closed_form_kind": str, "closed_form_regime": str}

    def compare_tolerance(self, metric, params):
        """rel_err is already relative: an absolute tolerance of 64 ulps of the case's dtype (an SVD's
        σ_max is backward stable, a few ulps times a slowly growing factor of the size); matrix_free (or
        auto, which may choose it) converges only to its own tol, and CLOSED_FORM_TOL allows it 10·tol."""
        exact = ulps_tolerance(64, params.get("dtype", "fp64"), relative=False)
        if params.get("method") == "exact":
            return exact
        lanczos = 10 * float(params.get("tol", 1e-6))
        if lanczos <= exact.atol:
            return exact
        return Tolerance(atol=lanczos, why=f"10 x the matrix-free tol {params.get('tol', 1e-6):g}, absolute")

    params = {
        "d": Param(int, minimum=1, help="normalized dimension (channels for BatchNorm)"),
        "eps": Param(
            float, 1e-5, minimum=0.0, help="the norm's ε (0 allowed: zero-variance inputs then fail)"
        ),
        "gain": Param(str, "ones", choices=("ones", "random"), help="γ = 1, or γ = 1 + 0.5·N(0,1) seeded"),
        "dtype": Param(str, "fp64", choices=tuple(sorted(DTYPES, key=lambda k: k != "fp64"))),  # fp64 first
        "dist": Param(
            str, "gaussian", choices=DISTS, help="input distribution (normbench/benches/_jacobian/inputs.py)"
        ),
        "mean": Param(float, 0.0, help="mean offset μ/σ, in units of scale"),
        "scale": Param(float, 1.0, exclusive_minimum=0.0, help="σ, the spread of the inputs"),
        "df": Param(float, 3.0, exclusive_minimum=0.0, help="Student-t degrees of freedom"),
        "outlier": Param(float, 100.0, help="the outlier coordinate's value in units of scale"),
        "method": Param(
            str,
            "auto",
            choices=("auto", "exact", "matrix_free"),
            help="auto = exact up to exact_limit (fp32/fp64), else matrix_free",
        ),
        "exact_limit": Param(int, 2048, minimum=1, help="largest Jacobian side the exact method builds"),
        "inputs": Param(int, 4, minimum=1, help="random inputs per case"),
        "batch": Param(
            int, 16, minimum=2, help="BatchNorm train: rows per batch (ignored by row-wise norms)"
        ),
        "tol": Param(
            float, 1e-6, exclusive_minimum=0.0, check=_below_one, help="matrix_free: relative tolerance on σ"
        ),
        "max_iters": Param(int, 300, minimum=1, help="matrix_free: Lanczos iteration cap"),
        "seed": Param(int, 0),
        "device": Param(str, "cpu", choices=("cpu", "cuda")),
    }

    def check_case(self, params, norm, impl):
        formula = formula_for(norm, impl)
        if formula is None:
            have = ", ".join(formulas())
            return [
                ("norms", f"{norm}:{impl} declares no Jacobian closed form; the jacobian bench takes {have}")
            ]
        problems = []
        p, dtype = params, params["dtype"]
        size = jacobian_side(p, formula.layout)
        if p["method"] == "exact" and dtype not in SVD_DTYPES:
            problems.append(
                (
                    "dtype",
                    f"method 'exact' cannot use {dtype}: torch.linalg.svdvals has no {dtype} "
                    "kernel; use fp32 or fp64, or method 'matrix_free'",
                )
            )
        if p["method"] == "exact" and size > p["exact_limit"]:
            what = "batch·d" if formula.layout == "batch" else "d"
            problems.append(
                (
                    "method",
                    f"'exact' builds a {size}×{size} Jacobian ({what} = {size}) above "
                    f"exact_limit = {p['exact_limit']}; use 'matrix_free' or 'auto'",
                )
            )
        floor = TOL_FLOOR * MACHINE_EPS[dtype]
        if resolve_method(p, formula.layout) == "matrix_free" and p["tol"] < floor:
            problems.append(
                (
                    "dtype",
                    f"method 'matrix_free' cannot use {dtype} at tol = {p['tol']:g}: {dtype} "
                    f"resolves {MACHINE_EPS[dtype]:.1e}; give tol >= {floor:.1e} or use fp32/fp64",
                )
            )
        return problems

    def run_case(self, case, ctx):
        import torch

        from normbench.benches._jacobian import measure
        from normbench.benches._jacobian.subject import build_subject

        p = case.params
        check_device(p["device"])
        formula = formula_for(case.norm, case.impl)
        dtype = getattr(torch, DTYPES[p["dtype"]])
        subject = build_subject(
            case.norm,
            case.impl,
            p["d"],
            formula,
            eps=p["eps"],
            dtype=dtype,
            device=p["device"],
            gain=p["gain"],
            seed=p["seed"],
        )
        batch = p["batch"] if formula.layout == "batch" else None
        xs = make_inputs(
            p["dist"],
            p["inputs"],
            p["d"],
            batch=batch,
            dtype=dtype,
            device=p["device"],
            mean=p["mean"],
            scale=p["scale"],
            df=p["df"],
            outlier=p["outlier"],
            seed=p["seed"],
        )
        if formula.input_statistics:
            check_statistics_fit(xs, p["dtype"], formula.layout, p["eps"])
        x64 = xs.double().cpu()
        closed = formula.compute(x64, subject.gamma, p["eps"], subject.extra) if formula.compute else None
        bounds = xiong_bounds(x64, subject.gamma, formula.layout)
        method = resolve_method(p, formula.layout)
        measure.warm_up()
        extras: dict[int, dict[str, float]] = {}
        if method == "exact":

            def structure(k, J, sigma):
                if batch is not None and closed is not None:
                    s = measure.batch_structure(J, batch, p["d"], sigma)
                    extras[k] = {
                        **{key: s[key] for key in ("coupling", "coupling_entry", "cross_channel_max")},
                        "channel_rel_err_max": max_rel_err(s["channel_sigma"], closed.per_channel[k]),
                    }

            measured = measure.exact(subject.f, xs, on_jacobian=structure)
        else:
            measured = measure.matrix_free(
                subject.f, xs, tol=p["tol"], max_iters=p["max_iters"], seed=p["seed"]
            )
            if batch is not None:
                c = measure.matrix_free(
                    subject.f,
                    xs,
                    tol=p["tol"],
                    max_iters=p["max_iters"],
                    seed=p["seed"],
                    operator=measure.cross_sample_maps,
                )
                for k in range(xs.shape[0]):
                    extras[k] = {
                        "coupling": c.sigma[k] / measured.sigma[k] if measured.sigma[k] > 0 else 0.0,
                        "coupling_converged": float(c.converged[k]),
                        "coupling_time": c.seconds[k],
                    }
        rows = input_rows(measured, closed, bounds, extras, HELD_SLACK[p["dtype"]])
        labels = {
            "method": method,
            "closed_form_kind": "none" if closed is None else "exact" if closed.exact else "bound",
            "closed_form_regime": "none" if closed is None else closed.regime,
        }
        rows = [{**r, **labels} for r in rows]
        unconverged = sum(not c for c in measured.converged) + sum(
            e.get("coupling_converged", 1) == 0 for e in extras.values()
        )
        if unconverged:
            return CaseResult(
                rows,
                "not_converged",
                f"{unconverged} Lanczos estimate(s) did not reach tol = {p['tol']:g} "
                f"in max_iters = {p['max_iters']}; last estimates kept, converged = 0",
            )
        if closed is not None and closed.exact and closed.regime == "general":
            tol = max(CLOSED_FORM_TOL[p["dtype"]], 10 * p["tol"] if method == "matrix_free" else 0.0)
            if disagreement := closed_form_disagreement(measured.sigma, closed.value, tol, p["dtype"]):
                return CaseResult(rows, "failed", disagreement)
        return CaseResult(rows)

    def headline(self, frame, opts):
        from normbench.benches._jacobian.report import jacobian_headline

        return jacobian_headline(frame, opts)

    def report(self, frame, opts):
        from normbench.benches._jacobian.report import jacobian_tables

        return jacobian_tables(frame, opts)

    def per_case(self, rows):
        """One row per (case, input): a Jacobian case measures several inputs, and the claims judge each."""
        from normbench.benches._jacobian.report import per_input

        return per_input(rows)
