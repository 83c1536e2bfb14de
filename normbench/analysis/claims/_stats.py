"""What the claims share: means over seeds with t intervals, log-log slopes with seed-bootstrap intervals,
one summary row per training run, and the derived `not_converged` judgement."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

import math

NOT_CONVERGED_GAP = 0.3  # nats behind the reference at the same seed and depth (the definition)
BOOTSTRAP = 2000


def mean_ci(values, tests: int = 1) -> tuple[float, float, float]:
    """(mean, low, high): the 95% Student-t interval of the mean (low = high = mean for one value); with
    tests = k, Bonferroni's simultaneous version (each at 1 − 0.05/k), for k intervals read together."""
    import numpy as np
    from scipy.stats import t

    v = np.asarray(list(values), dtype=float)
    m = float(v.mean()) if len(v) else math.nan
    if len(v) < 2:
        return m, m, m
    half = float(t.ppf(1 - 0.025 / tests, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v)))
    return m, m - half, m + half


def fmt_ci(low: float, high: float, digits: int = 3) -> str:
    return f"[{low:.{digits}g}, {high:.{digits}g}]"


def seeds_text(seeds) -> str:
    s = sorted({int(x) for x in seeds})
    if not s:
        return "—"
    span = f"{s[0]}–{s[-1]}" if s == list(range(s[0], s[-1] + 1)) and len(s) > 1 else ",".join(map(str, s))
    return f"{len(s)} ({span})"


def loglog_slope(x, y) -> float:
    import numpy as np

    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


def slope_with_ci(values: pd.DataFrame, x: str, y: str = "value") -> tuple[float, float, float]:
    """Log-log slope of the per-x means of y, and a 95% bootstrap interval resampling the seeds within each x
    (seed noise is what the interval is about; the x grid is fixed)."""
    import numpy as np

    groups = {k: g[y].to_numpy(float) for k, g in values.groupby(x)}
    xs = sorted(groups)
    point = loglog_slope(xs, [groups[k].mean() for k in xs])
    rng = np.random.default_rng(0)  # a fixed stream: the same rows give the same interval
    means = np.stack(  # (BOOTSTRAP, len(xs)): one resampled seed mean per x and draw
        [rng.choice(groups[k], (BOOTSTRAP, len(groups[k]))).mean(1) for k in xs], axis=1
    )
    lx = np.log(np.asarray(xs, float)) - np.log(np.asarray(xs, float)).mean()
    ly = np.log(means)
    boot = (ly - ly.mean(1, keepdims=True)) @ lx / (lx @ lx)  # least-squares slope of each draw
    low, high = np.percentile(boot, [2.5, 97.5])
    return point, float(low), float(high)


def stability_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per stability case: its parameters, stored status and summary numbers (final loss, unigram
    loss, step-1 update, last-LN input norm / √d at the last diagnostic step, top block gradient at step 1)."""
    import pandas as pd

    from normbench.analysis.report import bench_rows
    from normbench.benches import get_bench

    if "stability" not in set(frame["bench"]):
        return pd.DataFrame()
    bench = get_bench("stability")
    rows = bench_rows(frame, bench)
    rows = rows[~rows["status"].isin(["failed", "skipped", "unavailable"])]
    if rows.empty:
        return pd.DataFrame()
    keys = ["placement", "init", "warmup", "depth", "lr", "seed", "d", "steps", "judge"]
    params = rows.drop_duplicates("case_id")[["case_id", *[k for k in keys if k in rows]]]
    grads = rows[(rows["metric"] == "grad_norm") & (rows["step"] == 1) & (rows["site"] == "block")]
    top = grads[grads["layer"] == grads["depth"]].groupby("case_id")["value"].first().rename("top_grad1")
    out = bench.per_case(rows).merge(params, on="case_id").merge(top, on="case_id", how="left")
    return out.assign(last_ln_rel=out["last_ln"] / out["d"].astype(float).map(math.sqrt))


def pick(runs: pd.DataFrame, **conditions) -> pd.DataFrame:
    """Runs whose columns equal the given values (a callable value is a predicate on the column)."""
    import pandas as pd

    mask = pd.Series(True, index=runs.index)
    for key, want in conditions.items():
        mask &= runs[key].map(want) if callable(want) else runs[key] == want
    return runs[mask]


def not_converged(runs: pd.DataFrame, reference: pd.DataFrame) -> pd.Series:
    """Per run: True when its held-out loss is >= NOT_CONVERGED_GAP nats above the reference run with the
    same seed and depth (NaN where the reference lacks that seed/depth). A derived judgement across cases:
    a stored status is what a run alone can know, so `not_converged` is computed here, never stored."""
    import pandas as pd

    ref = reference.set_index(["seed", "depth"])["final_loss"]
    gaps = [
        r.final_loss - ref.get((r.seed, r.depth), math.nan)
        for r in runs[["seed", "depth", "final_loss"]].itertuples()
    ]
    gap = pd.Series(gaps, index=runs.index)
    return gap.ge(NOT_CONVERGED_GAP).where(gap.notna())
