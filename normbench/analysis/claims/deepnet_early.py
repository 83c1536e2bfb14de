"""DeepNet Fig. 4(a) (Wang et al. 2022, §3) as a windowed claim on the stability training runs: a stuck
Post-LN run's accumulated model update ‖F(x,θ_t) − F(x,θ_0)‖ reaches its plateau within the first steps,
while the stable configurations keep moving. Read from the stored `model_update` series (every `every` steps).

Details: docs/claims.md, "DeepNet (Wang et al. 2022, arXiv:2203.00555) — training runs"."""

from __future__ import annotations

from normbench.analysis.claims import FAIL, NO_DATA, PASS, Verdict, claim
from normbench.analysis.claims.deepnet import LEARNERS
from normbench.analysis.claims.stats import deepnet_training_runs, fmt_ci, mean_ci, pick, seeds_text

WINDOW = 10  # the first diagnostic step after step 1: 10 of 300 steps
PLATEAU = 0.8  # share of the run's last update already reached by WINDOW: "nearly no update shortly"


def early_share(frame):
    """Per case: model_update at step WINDOW over model_update at the run's last diagnostic step."""
    rows = frame[(frame["bench"] == "stability") & (frame["metric"] == "model_update")]
    rows = rows.dropna(subset=["step"])
    at = rows[rows["step"] == WINDOW].groupby("case_id")["value"].mean()
    last = rows.sort_values("step").groupby("case_id")["value"].last()
    return (at / last).dropna()


@claim(
    "postln_stuck_update_plateaus_early",
    source="DeepNet §3, Fig. 4(a) (18L-18L, iterations 0-30): 'Post-LN has an exploding update at the very "
    "beginning of training, and then nearly no update shortly. It indicates that the model has been stuck in "
    "a spurious local optima' (Post-LN without warmup flat after ≈ 2 steps; with warmup or Post-LN-init still "
    "rising at step 30)",
    statement=f"Stuck Post-LN runs (Xavier, no warmup) have reached their final accumulated model update by "
    f"step {WINDOW}; the stable configurations (Pre-LN and DeepNorm without warmup, Post-LN-init with warmup) "
    "have not: a smaller share of their final update is done by then",
    threshold=f"every stuck Post-LN run's update at step {WINDOW} ≥ {PLATEAU} × its last (a plateau: ≤ 20% "
    "more update in the remaining 290 steps), and the learners' seed-mean share's 95% interval wholly below "
    "the stuck runs' ('keep moving' is relative: a learner also saturates at the ≈ √(2d) that two unrelated "
    "LN outputs differ by, later)",
)
def postln_stuck_update_plateaus_early(frame):
    runs = deepnet_training_runs(frame)
    share = early_share(frame)
    if runs.empty or share.empty:
        return Verdict(NO_DATA, f"needs stability training runs with model_update rows at step {WINDOW}")
    runs = runs[runs["case_id"].isin(share.index)].assign(share=lambda r: r["case_id"].map(share))
    stuck = pick(runs, placement="post", init="xavier", warmup=0)
    stuck = stuck[stuck["status"] == "stuck"]
    learners = {name: pick(runs, **cond) for name, cond in LEARNERS.items()}
    learners = {name: g[g["status"] == "ok"] for name, g in learners.items() if (g["status"] == "ok").any()}
    if len(stuck) < 2 or sum(len(g) for g in learners.values()) < 2:
        return Verdict(NO_DATA, "needs ≥ 2 stuck Post-LN runs (no warmup) and ≥ 2 ok runs of the learners")
    import pandas as pd

    learn = pd.concat(learners.values())
    s_m, s_lo, s_hi = mean_ci(stuck["share"])
    l_m, l_lo, l_hi = mean_ci(learn["share"])
    ok = bool((stuck["share"] >= PLATEAU).all()) and l_hi < s_lo
    by_name = "; ".join(f"{name} {g['share'].mean():.2f}" for name, g in learners.items())
    return Verdict(
        PASS if ok else FAIL,
        f"update at step {WINDOW} / last: stuck Post-LN {s_m:.2f} (min {stuck['share'].min():.2f}, "
        f"{len(stuck)} runs, L={','.join(str(int(L)) for L in sorted(stuck['depth'].unique()))}); learners "
        f"{l_m:.2f} ({by_name})",
        seeds_text(list(stuck["seed"]) + list(learn["seed"])),
        f"stuck {fmt_ci(s_lo, s_hi)}; learners {fmt_ci(l_lo, l_hi)}",
    )
