"""Claims about training stability and initialization (Xiong et al. 2020, Lemma 2 and Theorem 1; Wang et
al. 2022 "DeepNet", §3 and Fig. 4), read from the `init` and `stability` benches' rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from normbench.analysis.claims import FAIL, NO_DATA, PASS, Verdict, claim


def _rows(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    from normbench.analysis.report import bench_rows
    from normbench.benches import all_benches

    if kind not in set(frame["bench"]):
        return frame.iloc[0:0]
    return bench_rows(frame, all_benches()[kind])


@claim(
    "preln_lemma2_band",
    source="Xiong et al. 2020, Lemma 2",
    statement="At init, each Pre-LN layer adds between d/2 and 3d/2 to E‖x_l‖²: ‖x_l‖²/d ∈ "
    "[s₀ + l/2, s₀ + 3l/2] with s₀ = ‖x₀‖²/d of the embedding (the paper's band has s₀ = 1)",
)
def preln_lemma2_band(frame):
    rows = _rows(frame, "init")
    rows = rows[(rows["metric"] == "stream_sq_norm")] if not rows.empty else rows
    rows = rows[rows["placement"] == "pre"] if not rows.empty else rows
    if rows.empty:
        return Verdict(NO_DATA, "no Pre-LN init rows (metric stream_sq_norm)")
    inside = total = literal = 0
    misses = []
    for depth, group in rows.groupby("depth"):
        by_layer = group.groupby("layer")["value"].mean()
        s0 = float(by_layer.loc[0])
        for layer, value in by_layer.items():
            if layer == 0:
                continue
            lo, hi = s0 + layer / 2, s0 + 3 * layer / 2
            total += 1
            literal += (1 + layer / 2) <= value <= (1 + 3 * layer / 2)
            if lo <= value <= hi:
                inside += 1
            else:
                misses.append(f"L={depth} l={int(layer)}: {value:.3f} ∉ [{lo:.3f}, {hi:.3f}]")
    numbers = (
        f"{inside}/{total} layers inside the band from the measured s₀ "
        f"(s₀ ≈ {float(rows[rows['layer'] == 0]['value'].mean()):.2f}); "
        f"{literal}/{total} inside the paper's literal [1 + l/2, 1 + 3l/2]"
    )
    if misses:
        numbers += "; misses: " + "; ".join(misses[:4])
    return Verdict(PASS if inside == total else FAIL, numbers)


@claim(
    "last_layer_ffn_grad_vs_depth",
    source="Xiong et al. 2020, Theorem 1",
    statement="At init, the last layer's FFN gradient ‖∂L/∂W^{2,L}‖ is independent of depth L for Post-LN "
    "(bound O(d√ln d)) and falls with L for Pre-LN (bound O(d√(ln d / L)), slope −½ in log-log)",
)
def last_layer_ffn_grad_vs_depth(frame):
    rows = _rows(frame, "init")
    if rows.empty:
        return Verdict(NO_DATA, "no init rows")
    rows = rows[
        (rows["metric"] == "ffn_grad_norm_of_mean") & (rows["site"] == "fc2") & (rows["init"] == "xavier")
    ]
    last = rows[rows["layer"] == rows["depth"]]
    slopes, parts = {}, []
    for placement in ("post", "pre"):
        g = last[last["placement"] == placement].groupby("depth")["value"].mean()
        if len(g) < 2:
            return Verdict(NO_DATA, f"needs {placement} at two or more depths")
        slopes[placement] = float(np.polyfit(np.log(g.index.astype(float)), np.log(g.values), 1)[0])
        parts.append(
            f"{placement}: "
            + ", ".join(f"L={int(L)} {v:.3f}" for L, v in g.items())
            + f" (log-log slope {slopes[placement]:+.2f})"
        )
    # Post-LN: flat means a slope within ±0.15 (a factor 1.23 over 6→24); Pre-LN: clearly falling.
    ok = abs(slopes["post"]) <= 0.15 and slopes["pre"] <= -0.25
    return Verdict(PASS if ok else FAIL, "; ".join(parts) + "; Theorem 1's Pre-LN bound has slope −0.50")


def _final_status(frame) -> pd.DataFrame:
    rows = _rows(frame, "stability")
    if rows.empty:
        return rows
    return rows.drop_duplicates("case_id")[["placement", "init", "warmup", "depth", "seed", "status"]]


@claim(
    "postln_stuck_when_deep",
    source="Wang et al. 2022 (DeepNet) §3, Fig. 3c; Xiong et al. 2020 §3.2",
    statement="Post-LN (Xavier) at depth ≥ 12 stays at the unigram entropy (stuck) without warmup and with a "
    "short warmup, while Pre-LN, DeepNorm and Post-LN with the 1/k_l init (+ warmup) learn",
)
def postln_stuck_when_deep(frame):
    runs = _final_status(frame)
    if runs.empty:
        return Verdict(NO_DATA, "no stability runs")
    deep = runs[runs["depth"] >= 12]
    post = deep[(deep["placement"] == "post") & (deep["init"] == "xavier")]
    learners = deep[~((deep["placement"] == "post") & (deep["init"] == "xavier"))]
    if post.empty or learners.empty:
        return Verdict(NO_DATA, "needs Post-LN Xavier and another configuration at depth ≥ 12")
    parts, ok = [], True
    for (warmup, depth), g in post.groupby(["warmup", "depth"]):
        stuck = int((g["status"] == "stuck").sum())
        ok &= stuck == len(g)
        parts.append(f"post warmup={int(warmup)} L={int(depth)}: stuck {stuck}/{len(g)}")
    for (placement, init), g in learners.groupby(["placement", "init"]):
        learned = int((g["status"] == "ok").sum())
        ok &= learned == len(g)
        parts.append(f"{placement}/{init}: ok {learned}/{len(g)}")
    return Verdict(PASS if ok else FAIL, "; ".join(parts))


@claim(
    "step1_model_update_order",
    source="Wang et al. 2022 (DeepNet) §3, Fig. 4a; Thm 4.2",
    statement="The model update ‖F(x,θ₁) − F(x,θ₀)‖ after one step orders Post-LN ≫ DeepNorm (≥ 3×), and "
    "warmup, then warmup with the 1/k_l init, shrink Post-LN's further",
)
def step1_model_update_order(frame):
    rows = _rows(frame, "stability")
    if rows.empty:
        return Verdict(NO_DATA, "no stability runs")
    upd = rows[(rows["metric"] == "model_update") & (rows["step"] == 1)]
    groups = {
        "post": (upd["placement"] == "post") & (upd["init"] == "xavier") & (upd["warmup"] == 0),
        "deepnorm": (upd["placement"] == "deepnorm"),
        "post+warmup": (upd["placement"] == "post") & (upd["init"] == "xavier") & (upd["warmup"] > 0),
        "post 1/k_l+warmup": (upd["placement"] == "post")
        & (upd["init"] == "depth_scaled")
        & (upd["warmup"] > 0),
    }
    parts, ok, seen = [], True, 0
    for depth in sorted(upd["depth"].unique()):
        med = {k: float(upd[m & (upd["depth"] == depth)]["value"].median()) for k, m in groups.items()}
        if any(np.isnan(v) for v in med.values()):
            continue
        seen += 1
        ok &= (
            med["post"] >= 3 * med["deepnorm"] and med["post"] > med["post+warmup"] > med["post 1/k_l+warmup"]
        )
        parts.append(f"L={int(depth)}: " + ", ".join(f"{k} {v:.3g}" for k, v in med.items()))
    if not seen:
        return Verdict(NO_DATA, "needs the four configurations at one depth at least")
    return Verdict(PASS if ok else FAIL, "; ".join(parts))
