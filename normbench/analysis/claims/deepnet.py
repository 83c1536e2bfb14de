"""Claims from DeepNet (Wang et al. 2022, §3 diagnostic study, Fig. 3-5, Thm 4.2), read from the `stability`
bench: one summary row per run (claims/_stats.py), seeds pooled or judged seed by seed as each sentence
says. `not_converged` is derived here against a named reference at the same seed and depth."""

from __future__ import annotations

from normbench.analysis.claims import FAIL, NO_DATA, PASS, Verdict, claim
from normbench.analysis.claims._stats import (
    NOT_CONVERGED_GAP,
    fmt_ci,
    mean_ci,
    not_converged,
    pick,
    seeds_text,
    slope_with_ci,
    stability_runs,
)

TRAINING = {"lr": 1e-3, "judge": True}  # the training runs (the lr ≤ 1e-4 update runs are separate cases)


def _training_runs(frame):
    runs = stability_runs(frame)
    return runs if runs.empty else pick(runs, **TRAINING)


def _count(g, status="stuck") -> str:
    return f"{int((g['status'] == status).sum())}/{len(g)}"


@claim(
    "postln_no_warmup_stuck_deep",
    source="Wang et al. 2022 (DeepNet) §3, Fig. 3c: 'Post-LN-init converged while Post-LN did not' (18L-18L); "
    "Fig. 4: 'Post-LN has an exploding update ... then nearly no update ... stuck in a spurious local optima'",
    statement="Post-LN (Xavier) without warmup is stuck at the unigram loss for L ≥ 12, every seed",
    threshold="every seed stuck (held-out loss within 0.1 nats of the unigram model's): the paper reports a "
    "run that does not converge, not a rate; 0.1 nats is 3% of the unigram loss, 4× the seed sd of stuck runs",
)
def postln_no_warmup_stuck_deep(frame):
    runs = _training_runs(frame)
    runs = runs if runs.empty else pick(runs, placement="post", init="xavier", warmup=0)
    deep = runs if runs.empty else runs[runs["depth"] >= 12]
    if deep.empty:
        return Verdict(NO_DATA, "needs Post-LN Xavier runs without warmup at L ≥ 12")
    parts = [f"L={int(L)}: stuck {_count(g)}" for L, g in deep.groupby("depth")]
    ok = bool((deep["status"] == "stuck").all())
    m, lo, hi = mean_ci(deep["unigram_loss"] - deep["final_loss"])
    return Verdict(
        PASS if ok else FAIL, "; ".join(parts), seeds_text(deep["seed"]), f"unigram − loss {fmt_ci(lo, hi)}"
    )


def _behind_reference(runs, placement_init, reference_init, warmup, depth_ok):
    """Runs of `placement_init` at warmup and depth, each marked stuck or not_converged vs the reference."""
    group = pick(runs, placement="post", init=placement_init, warmup=warmup, depth=depth_ok)
    ref = pick(runs, placement="post", init=reference_init, warmup=warmup, depth=depth_ok)
    return group.assign(behind=not_converged(group, ref)), ref


@claim(
    "postln_warmup_not_converged_very_deep",
    source="DeepNet §3, Fig. 3c/4 (18L-18L Post-LN w/ 4k warmup vs Post-LN-init w/ 4k warmup): 'Both warm-up "
    "and better initialization help alleviate this issue', yet only Post-LN-init converged",
    statement="At L ≥ 18, Post-LN + warmup does not converge: each seed is stuck or ≥ 0.3 nats behind "
    "Post-LN-init + the same warmup at the same seed and depth",
    threshold=f"every seed stuck or not_converged (≥ {NOT_CONVERGED_GAP} nats behind: ~40% of what the reference "
    "learns beyond the unigram loss, far above the ~0.02 nats seed sd of converged runs)",
)
def postln_warmup_not_converged_very_deep(frame):
    runs = _training_runs(frame)
    if runs.empty:
        return Verdict(NO_DATA, "no stability runs")
    group, ref = _behind_reference(runs, "xavier", "depth_scaled", lambda w: w > 0, lambda L: L >= 18)
    if group.empty or group["behind"].isna().all():
        return Verdict(
            NO_DATA, "needs Post-LN and Post-LN-init, both with warmup, at L ≥ 18 with shared seeds"
        )
    failed = (group["status"] == "stuck") | (group["behind"] == True)  # noqa: E712 (NaN is not True)
    gap = (
        group["final_loss"].to_numpy()
        - ref.set_index(["seed", "depth"])
        .loc[list(zip(group["seed"], group["depth"], strict=True)), "final_loss"]
        .to_numpy()
    )
    m, lo, hi = mean_ci(gap)
    parts = [
        f"L={int(L)}: {int(failed[g.index].sum())}/{len(g)} stuck or not_converged (stuck {_count(g)})"
        for L, g in group.groupby("depth")
    ]
    return Verdict(
        PASS if failed.all() else FAIL,
        "; ".join(parts) + f"; loss behind Post-LN-init {m:.3f} nats",
        seeds_text(group["seed"]),
        f"gap {fmt_ci(lo, hi)}",
    )


@claim(
    "warmup_helps_at_12",
    source="DeepNet §3: 'Both warm-up and better initialization help alleviate this issue'; Xiong et al. 2020 "
    "§3.2 (warmup is what makes Post-LN train)",
    statement="At L = 12, a 100-step warmup lowers Post-LN's held-out loss, paired by seed",
    threshold="the 95% t-interval of the paired loss difference (no warmup − warmup) lies above 0: 'helps' in "
    "expectation over seeds, not in every seed",
)
def warmup_helps_at_12(frame):
    runs = _training_runs(frame)
    if runs.empty:
        return Verdict(NO_DATA, "no stability runs")
    post = pick(runs, placement="post", init="xavier", depth=12)
    paired = pick(post, warmup=0).merge(pick(post, warmup=100), on="seed", suffixes=("_0", "_w"))
    if len(paired) < 2:
        return Verdict(NO_DATA, "needs Post-LN at L = 12 with and without a 100-step warmup, shared seeds")
    m, lo, hi = mean_ci(paired["final_loss_0"] - paired["final_loss_w"])
    return Verdict(
        PASS if lo > 0 else FAIL,
        f"no warmup {paired['final_loss_0'].mean():.3f} (stuck {_count(paired.rename(columns={'status_0': 'status'}))}), "
        f"warmup {paired['final_loss_w'].mean():.3f} (stuck {_count(paired.rename(columns={'status_w': 'status'}))}); "
        f"paired gain {m:.3f} nats",
        seeds_text(paired["seed"]),
        f"gain {fmt_ci(lo, hi)}",
    )


LEARNERS = {
    "pre/xavier, no warmup": {"placement": "pre", "init": "xavier", "warmup": 0},
    "deepnorm/deepnorm, no warmup": {"placement": "deepnorm", "init": "deepnorm", "warmup": 0},
    "post/1/k_l, warmup 100": {"placement": "post", "init": "depth_scaled", "warmup": 100},
}


@claim(
    "learners_learn",
    source="DeepNet §3 (Post-LN-init converges), §4-5 (DeepNet stable where Post-LN is not); Xiong et al. 2020 "
    "§4 (Pre-LN trains without warmup)",
    statement="Pre-LN, DeepNorm (no warmup) and Post-LN-init + warmup leave the unigram loss at every depth",
    threshold="every seed ok (neither stuck nor diverged): these are the configurations the papers present as "
    "stable, so one failure is a counter-example",
)
def learners_learn(frame):
    runs = _training_runs(frame)
    if runs.empty:
        return Verdict(NO_DATA, "no stability runs")
    parts, ok, seeds, gains = [], True, [], []
    for name, cond in LEARNERS.items():
        g = pick(runs, **cond)
        if g.empty:
            return Verdict(NO_DATA, f"no runs of {name}")
        ok &= bool((g["status"] == "ok").all())
        depths = ",".join(str(int(L)) for L in sorted(g["depth"].unique()))
        parts.append(f"{name}: ok {_count(g, 'ok')} (L={depths})")
        seeds += list(g["seed"])
        gains += list(g["unigram_loss"] - g["final_loss"])
    m, lo, hi = mean_ci(gains)
    return Verdict(
        PASS if ok else FAIL, "; ".join(parts), seeds_text(seeds), f"unigram − loss {fmt_ci(lo, hi)}"
    )


@claim(
    "postln_init_trains_without_warmup_at_12",
    source="DeepNet §3 and Thm 4.2: 'smaller initialization lowers √(v²+w²)' (the model-update bound), "
    "'warm-ups can reduce the magnitude of the model update by decreasing ‖θ*−θ‖'",
    statement="At L = 12, Post-LN-init (1/k_l) trains without any warmup, while Post-LN with a 300-step warmup "
    "alone (the whole run) is stuck or ≥ 0.3 nats behind it at the same seed",
    threshold="every seed: 1/k_l without warmup ok; Xavier + warmup 300 stuck or not_converged against it",
)
def postln_init_trains_without_warmup_at_12(frame):
    runs = _training_runs(frame)
    if runs.empty:
        return Verdict(NO_DATA, "no stability runs")
    init = pick(runs, placement="post", init="depth_scaled", warmup=0, depth=12)
    warm = pick(runs, placement="post", init="xavier", warmup=300, depth=12)
    if init.empty or warm.empty:
        return Verdict(NO_DATA, "needs Post-LN-init without warmup and Post-LN with warmup 300 at L = 12")
    behind = not_converged(warm, init)
    failed = (warm["status"] == "stuck") | (behind == True)  # noqa: E712
    ok = bool((init["status"] == "ok").all()) and bool(failed.all())
    m, lo, hi = mean_ci(
        warm["final_loss"].to_numpy() - init.set_index("seed").loc[warm["seed"], "final_loss"].to_numpy()
    )
    return Verdict(
        PASS if ok else FAIL,
        f"1/k_l no warmup: ok {_count(init, 'ok')}, loss {init['final_loss'].mean():.3f}; Xavier warmup 300: "
        f"{int(failed.sum())}/{len(warm)} stuck or not_converged, loss {warm['final_loss'].mean():.3f}",
        seeds_text(init["seed"]),
        f"gap {fmt_ci(lo, hi)}",
    )


@claim(
    "stuck_ln_input_large",
    source="DeepNet Fig. 4(b)/(c): '‖x‖ is significantly larger than √d (d = 512) without warm-up or proper "
    "initialization'",
    statement="At the last step, the input of the head-feeding LN has ‖x‖/√d ≥ 2.5 in stuck Post-LN runs "
    "without warmup and ≤ 1.6 in Post-LN-init + warmup runs",
    threshold="seed means: ≥ 2.5 and ≤ 1.6 (project's: an LN input sum of two unit-norm terms has "
    "‖x‖/√d ≈ √2 ≈ 1.41; 1.6 allows 13% above that, 2.5 is 'significantly larger' at 1.8× it)",
)
def stuck_ln_input_large(frame):
    runs = _training_runs(frame)
    if runs.empty:
        return Verdict(NO_DATA, "no stability runs")
    stuck = pick(runs, placement="post", init="xavier", warmup=0, status="stuck")
    good = pick(runs, placement="post", init="depth_scaled", warmup=lambda w: w > 0)
    if stuck.empty or good.empty:
        return Verdict(NO_DATA, "needs stuck Post-LN runs without warmup and Post-LN-init + warmup runs")
    ms, ls, hs = mean_ci(stuck["last_ln_rel"])
    mg, lg, hg = mean_ci(good["last_ln_rel"])
    return Verdict(
        PASS if ms >= 2.5 and mg <= 1.6 else FAIL,
        f"stuck Post-LN, no warmup ({len(stuck)} runs) {ms:.2f}; Post-LN-init + warmup ({len(good)} runs) {mg:.2f}",
        seeds_text(list(stuck["seed"]) + list(good["seed"])),
        f"stuck {fmt_ci(ls, hs)}, 1/k_l {fmt_ci(lg, hg)}",
    )


@claim(
    "top_block_grad_postln_init_larger",
    source="DeepNet §3, Fig. 3(a): 'Post-LN-init has an even larger gradient norm in the last layers'",
    statement="At step 1 (the init), the top block's gradient norm of Post-LN-init exceeds Post-LN's, L ≥ 12",
    threshold="seed means, Post-LN-init > Post-LN at every depth ≥ 12 (a strict ordering is the figure's claim)",
    disagreement="in this causal byte-level LM the 1/k_l init gives the *smaller* top-block gradient at every "
    "depth (first measured on run 20261129-152509-paper-d8b8: 0.99–1.12 vs 1.20–1.49); the paper's model is an "
    "18L-18L encoder-decoder on IWSLT-14",
)
def top_block_grad_postln_init_larger(frame):
    runs = _training_runs(frame)
    if runs.empty:
        return Verdict(NO_DATA, "no stability runs")
    deep = runs[(runs["depth"] >= 12) & (runs["placement"] == "post")]
    parts, ok, seen, cis = [], True, 0, []
    for L, g in deep.groupby("depth"):
        a, b = pick(g, init="depth_scaled")["top_grad1"], pick(g, init="xavier")["top_grad1"]
        if a.empty or b.empty:
            continue
        seen += 1
        ok &= a.mean() > b.mean()
        _, lo_a, hi_a = mean_ci(a)
        _, lo_b, hi_b = mean_ci(b)
        parts.append(f"L={int(L)}: 1/k_l {a.mean():.3f} vs Xavier {b.mean():.3f}")
        cis.append(f"L={int(L)} {fmt_ci(lo_a, hi_a)} vs {fmt_ci(lo_b, hi_b)}")
    if not seen:
        return Verdict(NO_DATA, "needs Post-LN and Post-LN-init at one depth ≥ 12")
    return Verdict(PASS if ok else FAIL, "; ".join(parts), seeds_text(deep["seed"]), "; ".join(cis))


def _early_updates(frame):
    """Step-1 model updates of the equal-lr (≤ 1e-4, no warmup) runs: DeepNet Fig. 5's regime."""
    runs = stability_runs(frame)
    if runs.empty:
        return runs
    runs = runs[(runs["lr"] <= 1e-4) & (runs["warmup"] == 0)]
    # the step-1 update does not depend on how long the run goes on: a 1-step and a 300-step run of the
    # same model, seed and lr measure the same thing once
    runs = runs.drop_duplicates(["placement", "init", "depth", "seed", "lr"])
    return runs.assign(value=runs["update1"])


UPDATE_SOURCE = (
    "DeepNet Fig. 5: 'Model updates of vanilla Post-LN and DeepNet at the early stage of training ... DeepNet "
    "has much smaller and more stable updates than Post-LN' (64-128-2 tiny Transformers, 6L-6L to 100L-100L)"
)


@claim(
    "update_postln_grows_deepnorm_fifth",
    source=UPDATE_SOURCE + "; Thm 4.2: Post-LN's bound accumulates over depth",
    statement="At equal lr ≤ 1e-4 and L ∈ {6, 12, 24, 48}, Post-LN's step-1 model update grows with depth, and "
    "DeepNorm's is ≤ 1/5 of Post-LN's at every depth",
    threshold="Post-LN log-log slope interval above 0 (grows); DeepNorm/Post-LN ratio of seed means ≤ 0.2 "
    "(project's reading of 'much smaller': the figure shows a gap of an order of magnitude; ≥ 3 seeds)",
)
def update_postln_grows_deepnorm_fifth(frame):
    runs = _early_updates(frame)
    post = runs if runs.empty else pick(runs, placement="post", init="xavier")
    deep = runs if runs.empty else pick(runs, placement="deepnorm", init="deepnorm")
    if post.empty or deep.empty or post["depth"].nunique() < 2:
        return Verdict(NO_DATA, "needs Post-LN and DeepNorm at lr ≤ 1e-4 without warmup at ≥ 2 depths")
    slope, lo, hi = slope_with_ci(post, "depth")
    pm, dm = post.groupby("depth")["value"].mean(), deep.groupby("depth")["value"].mean()
    ratio = (dm / pm).dropna()
    ok = lo > 0 and bool((ratio <= 0.2).all())
    return Verdict(
        PASS if ok else FAIL,
        "post: "
        + ", ".join(f"L={int(L)} {v:.3g}" for L, v in pm.items())
        + f" (slope {slope:+.2f}); deepnorm/post: "
        + ", ".join(f"L={int(L)} {v:.3f}" for L, v in ratio.items()),
        seeds_text(post["seed"]),
        f"post slope {fmt_ci(lo, hi)}",
    )


@claim(
    "update_deepnorm_nearly_constant",
    source=UPDATE_SOURCE + "; §4.3: 'the model update of DeepNet is nearly constant'",
    statement="DeepNorm's step-1 model update at equal lr ≤ 1e-4 is nearly constant over L ∈ {6, …, 48}",
    threshold="max/min of the seed means ≤ 1.5 over an 8× depth range (project's reading of 'nearly constant')",
    disagreement="DeepNorm's update grows about ×3.3 from L = 6 to 48 at lr 1e-4 (issue 11's measurement); "
    "α = (2N)^¼ and β = (8N)^-¼ bound the update, they do not make it depth-independent here",
)
def update_deepnorm_nearly_constant(frame):
    runs = _early_updates(frame)
    deep = runs if runs.empty else pick(runs, placement="deepnorm", init="deepnorm")
    if deep.empty or deep["depth"].nunique() < 2:
        return Verdict(NO_DATA, "needs DeepNorm at lr ≤ 1e-4 without warmup at ≥ 2 depths")
    means = deep.groupby("depth")["value"].mean()
    spread = float(means.max() / means.min())
    slope, lo, hi = slope_with_ci(deep, "depth")
    return Verdict(
        PASS if spread <= 1.5 else FAIL,
        ", ".join(f"L={int(L)} {v:.3g}" for L, v in means.items()) + f"; max/min {spread:.2f}",
        seeds_text(deep["seed"]),
        f"log-log slope {slope:+.2f} {fmt_ci(lo, hi)}",
    )


@claim(
    "stuck_onset_falls_with_lr",
    source="DeepNet Thm 4.2 (the update bound grows with ‖θ*−θ‖, i.e. with lr) and §3; Xiong et al. 2020 §3.2 "
    "(larger lr_max: 2.77 vs 31.16 BLEU with a 500-step warmup)",
    statement="Post-LN without warmup: the shallowest depth where most seeds are stuck does not increase "
    "as the lr grows (phase diagram depth × lr)",
    threshold="onset(lr) non-increasing in lr over the swept grid; an lr where no depth is stuck counts as "
    "onset beyond the deepest swept depth; majority of ≥ 3 seeds per cell",
)
def stuck_onset_falls_with_lr(frame):
    runs = stability_runs(frame)
    if runs.empty:
        return Verdict(NO_DATA, "no stability runs")
    grid = pick(runs, placement="post", init="xavier", warmup=0, judge=True)
    if grid["lr"].nunique() < 2:
        return Verdict(NO_DATA, "needs Post-LN without warmup at ≥ 2 learning rates")
    stuck = grid.assign(stuck=grid["status"] == "stuck").groupby(["lr", "depth"])["stuck"].mean()
    deepest = float(grid["depth"].max()) + 1
    onset = {
        lr: next((float(L) for L, f in g.droplevel(0).items() if f > 0.5), deepest)
        for lr, g in stuck.groupby(level=0)
    }
    values = [onset[lr] for lr in sorted(onset)]
    ok = all(a >= b for a, b in zip(values, values[1:], strict=False))
    text = ", ".join(
        f"lr {lr:g}: " + (f"L={int(v)}" if v < deepest else "none") for lr, v in sorted(onset.items())
    )
    return Verdict(PASS if ok else FAIL, "stuck onset " + text, seeds_text(grid["seed"]), "—")
