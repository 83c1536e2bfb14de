"""What the training benches' claims and report summary read: one row per training run (Bench.per_case,
through the registry) and the summary lines (ok/stuck/diverged per configuration, the lowest final loss)."""

from __future__ import annotations

import pandas as pd

from normbench.benches._lm import varying_keys

TRAINED = ("ok", "stuck", "diverged")  # a run that trained to its end; failed or skipped runs have no loss


def trained(frame):
    """The rows of runs that trained to their end (ok, stuck or diverged)."""
    return frame[frame["status"].isin(TRAINED)]


def by_configuration(rows, summarize, extra=()):
    """(one row per case from `summarize`, with its configuration's keys; those keys): the configuration is
    every swept parameter but the seed (eval_batches, judge: settings of the one-step update runs, which
    steps = 1 already tells apart), `depth` where nothing varies; `extra` columns come along."""
    keys = varying_keys(rows, exclude=("seed", "eval_batches", "judge")) or ["depth"]
    cases = rows.drop_duplicates("case_id")[["case_id", *dict.fromkeys([*keys, *extra])]]
    return summarize(rows).merge(cases, on="case_id"), keys


def case_summary(frame):
    """One row per case: status, final loss, unigram entropy, step-1 model update, last-LN input norm at the
    last diagnostic step, training time, the training batches' token-histogram ratio to the i.i.d. floor
    and share of padded positions (NaN for runs stored before they were measured)."""

    def metric_mean(rows, metric):
        return rows.loc[rows["metric"] == metric, "value"].mean()  # NaN when absent

    out = []
    for case_id, rows in frame.groupby("case_id", sort=False):
        last_ln = rows[rows["metric"] == "last_ln_input_norm"].sort_values("step")
        update = rows[(rows["metric"] == "model_update") & (rows["step"] == 1)]["value"]
        out.append(
            {
                "case_id": case_id,
                "status": rows["status"].iloc[0],
                **{
                    key: metric_mean(rows, metric)
                    for key, metric in [
                        ("final_loss", "final_loss"),
                        ("train_loss", "final_train_loss"),
                        ("unigram", "unigram_entropy"),
                        ("unigram_loss", "unigram_loss"),
                        ("optimal", "optimal_loss"),
                        ("wall", "case_wall_s"),
                        ("token_hist", "token_hist_over_iid"),
                        ("pad_fraction", "pad_fraction"),
                    ]
                },
                "update1": update.mean(),
                "last_ln": last_ln["value"].iloc[-1] if len(last_ln) else float("nan"),
            }
        )
    return pd.DataFrame(out)


def training_headline(rows) -> list[str]:
    """ok/stuck/diverged per configuration (only those not all ok named, when many), and the lowest loss."""
    runs = trained(rows)
    if runs.empty:
        return []
    summary, keys = by_configuration(runs, case_summary)
    counts = summary["status"].value_counts()
    configs = list(summary.groupby(keys, sort=True, dropna=False))
    total = ", ".join(f"{counts[s]} {s}" for s in ("ok", "stuck", "diverged") if s in counts)
    lines = [f"{len(summary)} training runs in {len(configs)} configurations ({', '.join(keys)}): {total}"]
    bad = []
    for key, g in configs:
        c = g["status"].value_counts()
        if c.get("ok", 0) < len(g):
            name = " ".join(map(str, key if isinstance(key, tuple) else (key,)))
            bad.append(f"{name} " + "/".join(f"{c.get(s, 0)}" for s in ("ok", "stuck", "diverged")))
    if bad:
        lines.append("not all ok (ok/stuck/diverged): " + ", ".join(bad))
    finite = summary[summary["status"] == "ok"]
    if len(finite):
        best = finite.groupby(keys, dropna=False)["final_loss"].mean().sort_values()
        name = best.index[0] if isinstance(best.index[0], tuple) else (best.index[0],)
        lines.append(
            f"lowest mean final loss: {' '.join(map(str, name))} {best.iloc[0]:.3f} nats"
            + (f" (highest ok: {best.iloc[-1]:.3f})" if len(best) > 1 else "")
        )
    return lines
