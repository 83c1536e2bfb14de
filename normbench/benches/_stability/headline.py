"""The stability bench's lines in the report summary (Stability.headline): ok/stuck/diverged over the
training runs, the configurations not all ok, and the lowest mean final loss."""

from __future__ import annotations

from normbench.benches._lm import varying_keys


def stability_headline(rows, opts) -> list[str]:
    """ok/stuck/diverged per configuration (only those not all ok named, when many), and the lowest loss."""
    from normbench.benches._stability.tables import case_summary

    runs = rows[rows["status"].isin(["ok", "stuck", "diverged"])]
    if runs.empty:
        return []
    keys = varying_keys(runs, exclude=("seed", "eval_batches", "judge")) or ["depth"]
    cases = runs.drop_duplicates("case_id")[["case_id", *keys]]
    summary = case_summary(runs).merge(cases, on="case_id")
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
