"""Claims from DeepNet (Wang et al. 2022, §3 diagnostic study, Fig. 3-4, Thm 4.2) on the training runs of
the `stability` bench: one summary row per run (claims/stats.py), seeds pooled or judged seed by seed as
each sentence says. Two groups of runs are compared by one rule (`stats.paired` / `behind_reference`): the
same seed and the same value of every other swept parameter. The model-update claims (Fig. 5) are in
deepnet_update.py, the gradient claims (Fig. 3a) in deepnet_grads.py."""

from __future__ import annotations

import functools

from normbench.analysis.claims import FAIL, NO_DATA, PASS, Verdict, claim
from normbench.analysis.claims.stats import (
    NOT_CONVERGED_GAP,
    behind_reference,
    deepnet_training_runs,
    fmt_ci,
    mean_ci,
    not_converged,
    paired,
    pick,
    seeds_text,
)
from normbench.analysis.runs import stability_runs


def count(g, status="stuck") -> str:
    return f"{int((g['status'] == status).sum())}/{len(g)}"


def with_runs(runs_of, missing: str):
    """A claim on `runs_of(frame)`: called as fn(frame, runs), NO_DATA `missing` when there are none."""

    def wrap(fn):
        @functools.wraps(fn)
        def judged(frame):
            runs = runs_of(frame)
            return Verdict(NO_DATA, missing) if runs.empty else fn(frame, runs)

        return judged

    return wrap


on_training_runs = with_runs(deepnet_training_runs, "no stability runs")


@claim(
    "postln_no_warmup_stuck_deep",
    source="Wang et al. 2022 (DeepNet) §3, Fig. 3c: 'Post-LN-init converged while Post-LN did not' (18L-18L); "
    "Fig. 4: 'Post-LN has an exploding update ... then nearly no update ... stuck in a spurious local optima'",
    statement="Post-LN (Xavier) without warmup is stuck at the unigram loss for L ≥ 12, every seed",
    threshold="every seed stuck (held-out loss within 0.1 nats of the unigram model's): the paper reports a "
    "run that does not converge, not a rate; 0.1 nats is 3% of the unigram loss, 4× the seed sd of stuck runs",
)
def postln_no_warmup_stuck_deep(frame):
    runs = deepnet_training_runs(frame)
    runs = runs if runs.empty else pick(runs, placement="post", init="xavier", warmup=0)
    deep = runs if runs.empty else runs[runs["depth"] >= 12]
    if deep.empty:
        return Verdict(NO_DATA, "needs Post-LN Xavier runs without warmup at L ≥ 12")
    parts = [f"L={int(L)}: stuck {count(g)}" for L, g in deep.groupby("depth")]
    ok = bool((deep["status"] == "stuck").all())
    m, lo, hi = mean_ci(deep["unigram_loss"] - deep["final_loss"])
    return Verdict(
        PASS if ok else FAIL, "; ".join(parts), seeds_text(deep["seed"]), f"unigram − loss {fmt_ci(lo, hi)}"
    )


def stuck_or_behind(group, ref, compared=("init",)):
    """(per run of `group`: stuck, or not_converged behind its paired `ref` run; the mean gap behind it, its
    interval), or None when no run of `group` has a paired reference (the same seed and swept parameters)."""
    behind = not_converged(group, ref, compared=compared)
    if behind.isna().all():
        return None
    failed = (group["status"] == "stuck") | (behind == True)  # noqa: E712 (NaN is not True)
    return failed, *mean_ci(behind_reference(group, ref, compared=compared).dropna())


@claim(
    "postln_warmup_not_converged_very_deep",
    source="DeepNet §3, Fig. 3c/4 (18L-18L Post-LN w/ 4k warmup vs Post-LN-init w/ 4k warmup): 'Both warm-up "
    "and better initialization help alleviate this issue', yet only Post-LN-init converged",
    statement="At L ≥ 18, Post-LN + warmup does not converge: each seed is stuck or ≥ 0.3 nats behind "
    "Post-LN-init + the same warmup (paired runs: same seed, depth and every other swept parameter)",
    threshold=f"every seed stuck or not_converged (≥ {NOT_CONVERGED_GAP} nats behind: ~40% of what the reference "
    "learns beyond the unigram loss, far above the ~0.02 nats seed sd of converged runs)",
)
@on_training_runs
def postln_warmup_not_converged_very_deep(frame, runs):
    deep = {"placement": "post", "warmup": lambda w: w > 0, "depth": lambda L: L >= 18}
    group, ref = pick(runs, **deep, init="xavier"), pick(runs, **deep, init="depth_scaled")
    if group.empty or (judged := stuck_or_behind(group, ref)) is None:
        return Verdict(
            NO_DATA, "needs Post-LN and Post-LN-init, both with warmup, at L ≥ 18 with shared seeds"
        )
    failed, m, lo, hi = judged
    parts = [
        f"L={int(L)}: {int(failed[g.index].sum())}/{len(g)} stuck or not_converged (stuck {count(g)})"
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
    statement="At L = 12, a 100-step warmup lowers Post-LN's held-out loss (paired runs)",
    threshold="the 95% t-interval of the paired loss difference (no warmup − warmup) lies above 0: 'helps' in "
    "expectation over seeds, not in every seed",
)
@on_training_runs
def warmup_helps_at_12(frame, runs):
    post = {"placement": "post", "init": "xavier", "depth": 12}
    pairs = paired(runs, {**post, "warmup": 0}, {**post, "warmup": 100})
    if len(pairs) < 2:
        return Verdict(NO_DATA, "needs Post-LN at L = 12 with and without a 100-step warmup, shared seeds")
    m, lo, hi = mean_ci(pairs["final_loss"] - pairs["final_loss_ref"])
    return Verdict(
        PASS if lo > 0 else FAIL,
        f"no warmup {pairs['final_loss'].mean():.3f} (stuck {count(pairs)}), "
        f"warmup {pairs['final_loss_ref'].mean():.3f} "
        f"(stuck {count(pairs.drop(columns='status').rename(columns={'status_ref': 'status'}))}); "
        f"paired gain {m:.3f} nats over {len(pairs)} pairs",
        seeds_text(pairs["seed"]),
        f"gain {fmt_ci(lo, hi)}",
    )


# the configurations the claims name, by the words their verdicts use
CONFIGS = {
    "post/xavier, no warmup": {"placement": "post", "init": "xavier", "warmup": 0},
    "pre/xavier, no warmup": {"placement": "pre", "init": "xavier", "warmup": 0},
    "deepnorm/deepnorm, no warmup": {"placement": "deepnorm", "init": "deepnorm", "warmup": 0},
    "post/1/k_l, warmup 100": {"placement": "post", "init": "depth_scaled", "warmup": 100},
}
LEARNERS = {k: CONFIGS[k] for k in list(CONFIGS)[1:]}  # what the papers present as stable


def learners_verdict(runs, per_group, what: str = "") -> Verdict:
    """PASS when every seed of each LEARNERS configuration is ok; per_group(g): the text after its ok count."""
    parts, ok, seeds, gains = [], True, [], []
    for name, cond in LEARNERS.items():
        g = pick(runs, **cond)
        if g.empty:
            return Verdict(NO_DATA, f"no {what}runs of {name}")
        ok &= bool((g["status"] == "ok").all())
        parts.append(f"{name}: ok {count(g, 'ok')}{per_group(g)}")
        seeds += list(g["seed"])
        gains += list(g["unigram_loss"] - g["final_loss"])
    m, lo, hi = mean_ci(gains)
    return Verdict(
        PASS if ok else FAIL, "; ".join(parts), seeds_text(seeds), f"unigram − loss {fmt_ci(lo, hi)}"
    )


@claim(
    "learners_learn",
    source="DeepNet §3 (Post-LN-init converges), §4-5 (DeepNet stable where Post-LN is not); Xiong et al. 2020 "
    "§4 (Pre-LN trains without warmup)",
    statement="Pre-LN, DeepNorm (no warmup) and Post-LN-init + warmup leave the unigram loss at every depth",
    threshold="every seed ok (neither stuck nor diverged): these are the configurations the papers present as "
    "stable, so one failure is a counter-example",
)
@on_training_runs
def learners_learn(frame, runs):
    def depths(g) -> str:
        return " (L=" + ",".join(str(int(L)) for L in sorted(g["depth"].unique())) + ")"

    return learners_verdict(runs, depths)


INIT_VS_WARMUP = ("init", "warmup")  # 1/k_l without warmup against Xavier with warmup 300


@claim(
    "postln_init_trains_without_warmup_at_12",
    source="derived prediction, not a DeepNet experiment (DeepNet trains Post-LN-init only with warmup): "
    "from Thm 4.2's bound ‖ΔF‖ ≤ Σ (√(v_i²+w_i²)/α)·‖θ_i*−θ_i‖, 'smaller initialization lowers √(v²+w²)' "
    "and 'warm-ups can reduce the magnitude of the model update by decreasing ‖θ*−θ‖': if the update's size "
    "is what sticks Post-LN, the smaller init alone should suffice",
    statement="Derived prediction: at L = 12, Post-LN-init (1/k_l) trains without any warmup, while Post-LN "
    "with a 300-step warmup alone (the whole run) is stuck or ≥ 0.3 nats behind it (paired runs)",
    threshold="every seed: 1/k_l without warmup ok; Xavier + warmup 300 stuck or not_converged against it",
)
@on_training_runs
def postln_init_trains_without_warmup_at_12(frame, runs):
    init = pick(runs, placement="post", init="depth_scaled", warmup=0, depth=12)
    warm = pick(runs, placement="post", init="xavier", warmup=300, depth=12)
    if init.empty or warm.empty:
        return Verdict(NO_DATA, "needs Post-LN-init without warmup and Post-LN with warmup 300 at L = 12")
    if (judged := stuck_or_behind(warm, init, INIT_VS_WARMUP)) is None:
        return Verdict(
            NO_DATA, "no Xavier + warmup 300 run has a 1/k_l run at the same seed and swept parameters"
        )
    failed, m, lo, hi = judged
    ok = bool((init["status"] == "ok").all()) and bool(failed.all())
    return Verdict(
        PASS if ok else FAIL,
        f"1/k_l no warmup: ok {count(init, 'ok')}, loss {init['final_loss'].mean():.3f}; Xavier warmup 300: "
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
@on_training_runs
def stuck_ln_input_large(frame, runs):
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
