"""Claims on scale invariance, the root of LayerNorm's implicit learning-rate decay (Ba et al. 2016, §5),
read from the init bench's `scale_grad_ratio` rows (label `scale` = c): ‖∇_W L at cW‖ / ‖∇_W L at W‖ for a
Linear(d, d) feeding the case's norm. Exact invariance gives 1/c, so ratio·c = 1."""

from __future__ import annotations

import json

from normbench.analysis.claims import FAIL, NO_DATA, PASS, Verdict, claim
from normbench.analysis.claims.stats import fmt_ci, mean_ci, seeds_text

SCALE_TOL = 0.01
SCALE_RANGE = (0.1, 10.0)  # judged scales: outside, ε/(c²σ²) (below) is no longer negligible against 1%
DYT_MIN_DEVIATION = 0.1


def _scale_rows(frame):
    """Init rows of scale_grad_ratio with the scale c and the case's seed: value·c is 1 under invariance."""
    rows = frame[(frame["bench"] == "init") & (frame["metric"] == "scale_grad_ratio")]
    rows = rows[~rows["status"].isin(["failed", "skipped", "unavailable"])]
    if rows.empty or "scale" not in rows:
        return rows.iloc[0:0]
    seeds = rows["params"].map(lambda p: json.loads(p).get("seed"))
    return rows.assign(seed=seeds, scaled=rows["value"] * rows["scale"].astype(float))


LN_SECTION5 = (
    "Ba et al. 2016 (Layer Normalization) §5: a layer-normalized model is invariant to re-scaling the weights "
    "feeding the norm (Table 1), so the gradient w.r.t. W at cW is 1/c of that at W and the effective learning "
    "rate falls as ‖W‖ grows (implicit learning-rate decay)"
)


@claim(
    "scale_invariance_ln_rms_bn",
    source=LN_SECTION5,
    statement="For LayerNorm, RMSNorm and BatchNorm fed by a Linear(d, d), ‖∇_W L at cW‖ / ‖∇_W L at W‖ · c "
    f"= 1 at every measured scale {SCALE_RANGE[0]:g} ≤ c ≤ {SCALE_RANGE[1]:g}",
    threshold=f"abs(ratio·c − 1) ≤ {SCALE_TOL:g} for every seed and scale: the invariance is exact except for ε "
    "inside the square root (ratio·c ≈ 1 − ε(1/c² − 1)/(2σ²): 1.5e-3 at ε = 1e-5, c = 0.1, σ² = 1/3, the "
    "output variance of a default-initialized Linear on unit inputs) and float32 round-off (~1e-6); 1% is far "
    "above both and far below a broken invariance (DyT's is of order 1). Scales below 0.1 are listed, not "
    "judged: there ε itself, the known breaker of the invariance, approaches 1%",
)
def scale_invariance_ln_rms_bn(frame):
    rows = _scale_rows(frame)
    parts, ok, seen, seeds, cis = [], True, 0, [], []
    for norm in ("layernorm", "rmsnorm", "batchnorm"):
        g = rows[rows["norm"] == norm] if not rows.empty else rows
        c = g["scale"].astype(float) if not g.empty else None
        judged = g[(c >= SCALE_RANGE[0]) & (c <= SCALE_RANGE[1])] if not g.empty else g
        if judged.empty:
            parts.append(f"{norm}: no rows at {SCALE_RANGE[0]:g} ≤ c ≤ {SCALE_RANGE[1]:g}")
            continue
        seen += 1
        g, outside = judged, g.drop(judged.index)
        dev = (g["scaled"] - 1).abs()
        ok &= bool(dev.max() <= SCALE_TOL)
        _, lo, hi = mean_ci(g["scaled"])
        scales = ", ".join(f"{c:g}" for c in sorted(g["scale"].astype(float).unique()))
        listed = "".join(
            f"; c={c:g} (not judged) {v:.3g}"
            for c, v in (outside["scaled"] - 1).abs().groupby(outside["scale"].astype(float)).mean().items()
        )
        parts.append(f"{norm}: max abs(ratio·c − 1) {dev.max():.2g} (c = {scales}){listed}")
        cis.append(f"{norm} {fmt_ci(lo, hi, 5)}")
        seeds += list(g["seed"])
    if seen < 3:
        return Verdict(
            NO_DATA, "needs scale_grad_ratio rows of layernorm, rmsnorm and batchnorm; " + "; ".join(parts)
        )
    return Verdict(PASS if ok else FAIL, "; ".join(parts), seeds_text(seeds), "ratio·c " + "; ".join(cis))


@claim(
    "dyt_not_scale_invariant",
    source=LN_SECTION5 + "; DyT(x) = γ·tanh(αx) + β has no normalizing denominator (Zhu et al. 2025 §3)",
    statement="For DyT fed by a Linear(d, d), the gradient ratio is clearly not 1/c at scales c ≤ 1/2 or ≥ 2",
    threshold=f"seed mean of abs(ratio·c − 1) ≥ {DYT_MIN_DEVIATION:g} at every scale with c ≤ 1/2 or c ≥ 2: ten "
    f"times the {SCALE_TOL:g} tolerance of the invariant norms (in tanh's linear range the ratio is ≈ 1, so "
    "abs(ratio·c − 1) ≈ abs(c − 1) ≥ 0.5 there)",
)
def dyt_not_scale_invariant(frame):
    rows = _scale_rows(frame)
    g = rows[rows["norm"] == "dyt"] if not rows.empty else rows
    if not g.empty:
        c = g["scale"].astype(float)
        g = g[(c <= 0.5) | (c >= 2)]
    if g.empty:
        return Verdict(NO_DATA, "needs scale_grad_ratio rows of dyt at a scale c ≤ 1/2 or ≥ 2")
    dev = (g["scaled"] - 1).abs().groupby(g["scale"].astype(float)).mean()
    m, lo, hi = mean_ci((g["scaled"] - 1).abs())
    return Verdict(
        PASS if bool((dev >= DYT_MIN_DEVIATION).all()) else FAIL,
        "dyt abs(ratio·c − 1): " + ", ".join(f"c={c:g} {v:.3g}" for c, v in dev.items()),
        seeds_text(g["seed"]),
        f"abs(ratio·c − 1) {fmt_ci(lo, hi)}",
    )
