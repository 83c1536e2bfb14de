"""What the claims share: means over seeds with t intervals, log-log slopes with seed-bootstrap intervals,
one summary row per training run, and the derived `not_converged` judgement."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

import math

from normbench.analysis.runs import config_keys, stability_runs
from normbench.core.student_t import t_quantile

NOT_CONVERGED_GAP = (
    0.3  # nats behind the reference at the same seed and depth (docs/claims.md: `not_converged`)
)
BOOTSTRAP = 2000


TRAINING_BENCHES = ("stability", "encdec")  # the bench kinds whose rows are training time series


def mean_ci(values, tests: int = 1) -> tuple[float, float, float]:
    """(mean, low, high): the 95% Student-t interval of the mean (low = high = mean for one value); with
    tests = k, Bonferroni's simultaneous version (each at 1 − 0.05/k), for k intervals read together."""
    import numpy as np

    v = np.asarray(list(values), dtype=float)
    m = float(v.mean()) if len(v) else math.nan
    if len(v) < 2:
        return m, m, m
    half = float(t_quantile(1 - 0.025 / tests, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v)))
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


def paired(runs: pd.DataFrame, a: dict, b: dict) -> pd.DataFrame:
    """The one pairing rule of every claim that compares two groups of runs: runs matching `a` beside runs
    matching `b` with the same seed and the same value of every other swept parameter (depth, d, ffn,
    heads, data_seed, lr, ...; everything `config_keys` finds varying, bookkeeping left out). Keys on which
    `a` and `b` ask for different values are the comparison itself and are not matched. Columns of the `b`
    run get the suffix `_ref`. A claim never pairs by seed alone: two runs that differ in a parameter
    nobody named are not a pair."""
    if runs.empty:
        return runs
    compared = {k for k in {*a, *b} if k not in a or k not in b or not _same(a[k], b[k])}
    keys = ["seed", *[k for k in config_keys(runs) if k not in compared]]
    left, right = pick(runs, **a), pick(runs, **b)
    return left.merge(right, on=keys, suffixes=("", "_ref"))


def _same(x, y) -> bool:
    return x is y or (not callable(x) and not callable(y) and x == y)


def window_mean(frame: pd.DataFrame, metric: str, first: int, last: int, **labels) -> pd.Series:
    """Per case: the mean of a stored time series (every `every` steps) over steps first..last, e.g. the
    top block's gradient norm (labels: site="block", layer="top" for layer = depth); the training benches'
    rows (stability, encdec)."""
    rows = frame[frame["bench"].isin(TRAINING_BENCHES) & (frame["metric"] == metric)]
    rows = rows[(rows["step"] >= first) & (rows["step"] <= last)]
    for key, want in labels.items():
        rows = rows[rows[key] == rows["depth"]] if want == "top" else rows[rows[key] == want]
    return rows.groupby("case_id")["value"].mean()


def pick(runs: pd.DataFrame, **conditions) -> pd.DataFrame:
    """Runs whose columns equal the given values (a callable value is a predicate on the column)."""
    import pandas as pd

    mask = pd.Series(True, index=runs.index)
    for key, want in conditions.items():
        mask &= runs[key].map(want) if callable(want) else runs[key] == want
    return runs[mask]


def not_converged(runs: pd.DataFrame, reference: pd.DataFrame, *, compared: tuple[str, ...]) -> pd.Series:
    """Per run: True when its held-out loss is >= NOT_CONVERGED_GAP nats above its reference run
    (`behind_reference`: the same seed and every swept parameter but the `compared` ones; NaN where there
    is none). A derived judgement across cases: a stored status is what a run alone can know, so
    `not_converged` is computed here, never stored."""
    gap = behind_reference(runs, reference, compared=compared)
    return gap.ge(NOT_CONVERGED_GAP).where(gap.notna())


def behind_reference(runs: pd.DataFrame, reference: pd.DataFrame, *, compared: tuple[str, ...]) -> pd.Series:
    """Per run: final loss minus its reference run's, by the one pairing rule (`paired`): the same seed and
    the same value of every swept parameter except the `compared` keys, which the caller names (the keys
    on which the two groups differ by design, e.g. init, or init and warmup); NaN without a reference. A
    key the caller did not name is always matched, so a run at d = 128 never pairs with one at d = 64."""
    import pandas as pd

    both = pd.concat([runs, reference])
    keys = ["seed"] + [k for k in config_keys(both) if k not in compared]
    ref = reference.drop_duplicates(keys).set_index(keys)["final_loss"]
    index = pd.MultiIndex.from_frame(runs[keys]) if len(keys) > 1 else pd.Index(runs[keys[0]])
    return pd.Series(runs["final_loss"].to_numpy() - ref.reindex(index).to_numpy(), index=runs.index)


# the training runs: Adam on every parameter at lr 1e-3 (the update runs of deepnet_update.py are separate)
TRAINING = {"lr": 1e-3, "judge": True, "optimizer": "adam", "train": "all"}


def deepnet_training_runs(frame):
    """The stability runs DeepNet's training claims read (TRAINING), one row each."""
    runs = stability_runs(frame)
    return runs if runs.empty else pick(runs, **TRAINING)


def settings(runs: pd.DataFrame, exclude=("norm",)) -> list[tuple[str, pd.DataFrame]]:
    """The runs split by every swept parameter except `exclude` (the compared keys) and the seed:
    [(label, runs of that setting)], label = "key=value ..." of what varies ("" when only one setting).
    A claim judged per setting never pools seeds of different configurations into one interval."""
    keys = [k for k in config_keys(runs) if k not in exclude] if not runs.empty else []
    if not keys:
        return [("", runs)] if not runs.empty else []
    groups = runs.groupby([runs[k].astype(str) for k in keys], sort=True, dropna=False)
    out = []
    for values, g in groups:
        values = values if isinstance(values, tuple) else (values,)
        unused = ("None", "nan", "<NA>")  # e.g. `batch` under a token budget (claims/_batch_stats.py)
        shown = [(k, v) for k, v in zip(keys, values, strict=True) if not _missing(v) and v not in unused]
        out.append((" ".join(f"{k}={v}" for k, v in shown), g))
    return out


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
