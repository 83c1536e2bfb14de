"""DeepNet's Theorem 4.3 on the encdec bench's training runs: the decoder is the less stable
side of an encoder-decoder, because "the cross-attention propagates the magnitude growth from the encoder to
the decoder". ΔF_ed = `model_update` (the head's input), ΔF_e = `enc_update` (the encoder's output), both
LN outputs per token in Post-LN, so they are on one scale; the norm inputs are split by the site's stack."""

from __future__ import annotations

import math

from normbench.analysis.claims import FAIL, NO_DATA, PASS, REPORTED, Verdict, claim
from normbench.analysis.claims.deepnet import CONFIGS
from normbench.analysis.claims.deepnet_update import DERIVATION
from normbench.analysis.claims.encdec import case_values, encdec_training_runs, on_encdec_training_runs
from normbench.analysis.claims.encdec_update import ALONG_DEPTH, update_runs
from normbench.analysis.claims.stats import fmt_ci, mean_ci, pick, seeds_text, settings, window_mean

POSTLN = {"placement": "post", "init": "xavier"}
BLOW_UP = 2.5  # ‖x‖/√d: the decoder-only claim stuck_ln_input_large's "significantly larger than √d"
CARRIED_FLOOR = 0.5  # the carried term is the larger part of the decoder's update


def side_first_crossing(frame, widths) -> dict[str, dict[str, float]]:
    """Per case of `widths` (case_id -> its own d): {side: the first diagnostic step where that side's largest
    LN input ‖x‖/√d ≥ BLOW_UP (inf: never), and init_<side>: that largest input at step 0}."""
    rows = frame[(frame["metric"] == "ln_input_norm") & frame["case_id"].isin(widths.index)]
    d = rows["case_id"].map(widths).astype(float)
    rows = rows.assign(side=rows["site"].str.slice(0, 3), rel=rows["value"] / d.map(math.sqrt))
    top = rows.groupby(["case_id", "side", "step"])["rel"].max()
    out: dict[str, dict[str, float]] = {}
    for (case_id, side), series in top.groupby(level=[0, 1]):
        series = series.droplevel([0, 1])
        crossed = series[series >= BLOW_UP]
        entry = out.setdefault(case_id, {})
        entry[side] = float(crossed.index.min()) if len(crossed) else math.inf
        entry[f"init_{side}"] = float(series.get(0, math.nan))
    return out


def _ratio_cells(runs, by: list[str]):
    """Per cell of `by`: (label, mean ratio, interval) of ΔF_ed/ΔF_e on the log, Bonferroni over the cells."""
    runs = runs.assign(log_ratio=(runs["value"] / runs["enc"]).map(math.log))
    cells = list(runs.groupby(by))
    out = []
    for key, g in cells:
        m, lo, hi = mean_ci(g["log_ratio"], tests=len(cells))
        out.append((key, math.exp(m), math.exp(lo), math.exp(hi)))
    return out


def _onset_crossings(frame, post):
    """The stuck onset (shallowest depth where most seeds are stuck) and, per seed there, the first step at
    which each side's largest LN input crosses BLOW_UP·√d; (None, []) without an onset."""
    stuck = post.assign(stuck=post["status"] == "stuck").groupby("depth")["stuck"].mean()
    onset = next((L for L, share in stuck.items() if share > 0.5), None)
    if onset is None:
        return None, post.iloc[0:0], []
    at = post[post["depth"] == onset]
    crossing = side_first_crossing(frame, at.set_index("case_id")["d"])  # each run's own width
    return onset, at, [crossing.get(c, {}) for c in at["case_id"]]


def _step(v) -> str:
    return "never" if v == math.inf else str(int(v))


@claim(
    "decoder_less_stable",
    source="DeepNet Thm 4.3 (encoder-decoder): ‖ΔF_ed‖ ≤ Σ_j (v_{d,3j-1} w_{d,3j-1}/α_d)‖ΔF_e‖ + Σ_j √(v²+w²)/α_d "
    "‖θ*_{d,j} − θ_{d,j}‖, 'the cross-attention propagates the magnitude growth from the encoder to the decoder. "
    "It explains why the decoder is more unstable than the encoder' (citing Liu et al. 2020)",
    statement="Post-LN encoder-decoder, no warmup: (a) the theorem's mechanism, in its setting (one SGD step on "
    "the β-scaled matrices, small η): the encoder's update carried through the cross-attention into the "
    "unchanged decoder, ‖F_ed(θ_d, F_e(θ*_e)) − F_ed(θ)‖, is the larger part of the decoder's update ΔF_ed, at "
    "every depth and setting; (b) in training (Adam, lr 1e-3), at the shallowest depth where most seeds are "
    f"stuck, the decoder's largest LN input reaches ‖x‖/√d ≥ {BLOW_UP} before the encoder's does, in every seed",
    threshold=f"(a) per setting (η and every swept key but depth) and depth, the 95% t-interval (Bonferroni over "
    f"the cells) of the carried ratio dec_update_via_enc/ΔF_ed above {CARRIED_FLOOR}: the theorem bounds ΔF_ed "
    "by the carried term plus the decoder's own, and 'propagates the magnitude growth from the encoder' is the "
    "first term being the larger. The ordering ΔF_ed > ΔF_e per depth is reported, not judged (the theorem's "
    "bound does not order them: a carried share near 1 with a cross-attention that shrinks it gives ΔF_ed < "
    "ΔF_e), as are the training runs' Adam step-1 ratios (both sides near saturation: two unrelated LN outputs "
    f"differ by ≈ √(2d) per token); (b) 'blows up' = crosses {BLOW_UP}·√d, the decoder-only claim's 'significantly larger "
    "than √d' (an LN input of two unit-norm terms sits at √2); 'first' = at an earlier diagnostic step (every 10 "
    "steps), the encoder's never crossing counting as later. The gradients are reported: the theorem bounds the "
    "update",
)
def decoder_less_stable(frame):
    sgd = update_runs(frame)
    sgd = sgd if sgd.empty else pick(sgd, **POSTLN, **DERIVATION)
    runs = encdec_training_runs(frame)
    post = runs if runs.empty else pick(runs, **POSTLN, warmup=0)
    post = post if post.empty else post[post["N"] == post["M"]]
    if sgd.empty or post.empty or post["N"].nunique() < 2:
        return Verdict(
            NO_DATA,
            "needs encoder-decoder Post-LN one-step SGD beta_scaled runs and Post-LN Xavier training runs "
            "without warmup at ≥ 2 depths",
        )
    ok, parts, carried, cis = True, [], [], []
    sgd = _with_settings(frame, sgd)
    cells = list(sgd.groupby(["setting", "depth"]))
    for (label, L), g in cells:
        m, lo, hi = mean_ci(g["carried"], tests=len(cells))
        ok &= lo > CARRIED_FLOOR
        carried.append(f"{label} {int(L)}L {m:.2f}".strip())
        cis.append(f"{label} {int(L)}L {fmt_ci(lo, hi)}".strip())
    for (label, L), ratio, lo, hi in _ratio_cells(sgd, ["setting", "depth"]):
        parts.append(f"{label} {int(L)}L ×{ratio:.3f} {fmt_ci(lo, hi, 4)}".strip())
    post = post.assign(depth=post["N"], value=post["update1"])
    post = post.assign(enc=post["case_id"].map(case_values(frame, "enc_update", step=1)))
    adam = "; ".join(
        f"{int(L)}L ×{r:.2f} {fmt_ci(lo, hi)}" for (L,), r, lo, hi in _ratio_cells(post, ["depth"])
    )
    onset, at, first = _onset_crossings(frame, post)
    if onset is None:
        crossing_text = "no depth where most training seeds are stuck"
        ok = False
    else:
        decoder_first = [e.get("dec", math.inf) < e.get("enc", math.inf) for e in first]
        ok &= all(decoder_first)
        crossings = ", ".join(
            f"dec {_step(e.get('dec', math.inf))}/enc {_step(e.get('enc', math.inf))}" for e in first
        )
        init = ", ".join(
            f"{e.get('init_dec', math.nan):.2f}/{e.get('init_enc', math.nan):.2f}" for e in first
        )
        crossing_text = (
            f"stuck onset {int(onset)}L ({int((at['status'] == 'stuck').sum())}/{len(at)} stuck): first step with "
            f"LN input ≥ {BLOW_UP}·√d per seed {crossings} (step-0 largest dec/enc {init}); decoder first "
            f"{sum(decoder_first)}/{len(first)}"
        )
    grads = {s: case_values(frame, "grad_norm", step=1, site=s) for s in ("enc", "dec")}
    grad_text = ", ".join(
        f"{int(L)}L {g['case_id'].map(grads['enc']).mean():.3g}/{g['case_id'].map(grads['dec']).mean():.3g}"
        for L, g in post.groupby("depth")
    )
    return Verdict(
        PASS if ok else FAIL,
        "(a) SGD, the encoder's update carried into the decoder, dec_update_via_enc/ΔF_ed: "
        + ", ".join(carried)
        + f". (b) {crossing_text}. Reported: the ordering, SGD ΔF_ed/ΔF_e "
        + ", ".join(parts)
        + f"; Adam step-1 ΔF_ed/ΔF_e in training {adam}; mean block gradient at step 1 enc/dec {grad_text}",
        seeds_text(list(sgd["seed"]) + list(post["seed"])),
        "carried ratio " + "; ".join(cis),
    )


def _with_settings(frame, sgd):
    """The SGD runs with their setting's label (every swept key but depth) and carried ratio."""
    labels = {c: label for label, g in settings(sgd, exclude=ALONG_DEPTH) for c in g["case_id"]}
    via = sgd["case_id"].map(case_values(frame, "dec_update_via_enc", step=1))
    return sgd.assign(setting=sgd["case_id"].map(labels), carried=via / sgd["value"])


GRAD_WINDOW = (100, 300)
SIDES_OF = {k: CONFIGS[k] for k in list(CONFIGS)[:3]}  # Post-LN, Pre-LN, DeepNorm without warmup


@claim(
    "encdec_gradient_by_side",
    source="DeepNet §3 ('the exploding gradients in deep layers should not be the root cause of instability of "
    "Post-LN'); Liu et al. 2020 §3: in Post-LN only the decoder suffers gradient vanishing",
    statement="Report only: the mean per-layer gradient norm of the encoder's and the decoder's blocks, at step 1 "
    f"and over steps {GRAD_WINDOW[0]}–{GRAD_WINDOW[1]}, per placement and depth",
    threshold="none (REPORTED): Theorem 4.3 bounds the update, not the gradient",
)
@on_encdec_training_runs
def encdec_gradient_by_side(frame, runs):
    step1 = {s: case_values(frame, "grad_norm", step=1, site=s) for s in ("enc", "dec")}
    window = {s: window_mean(frame, "grad_norm", *GRAD_WINDOW, site=s) for s in ("enc", "dec")}
    parts, seeds = [], []
    for name, cond in SIDES_OF.items():
        g = pick(runs, **cond)
        if g.empty:
            continue
        seeds += list(g["seed"])
        cells = []
        for layers, d in g.groupby("layers"):
            ids = d["case_id"]
            cells.append(
                f"{layers} @1 {ids.map(step1['enc']).mean():.3g}/{ids.map(step1['dec']).mean():.3g}, "
                f"@{GRAD_WINDOW[0]}–{GRAD_WINDOW[1]} {ids.map(window['enc']).mean():.3g}/{ids.map(window['dec']).mean():.3g}"
            )
        parts.append(f"{name} (enc/dec): " + "; ".join(cells))
    if not parts:
        return Verdict(NO_DATA, "no Post-LN, Pre-LN or DeepNorm encoder-decoder training runs")
    return Verdict(REPORTED, " | ".join(parts), seeds_text(seeds), "—")
