"""Report tables of the init bench: values per layer (rows: depth, layer) for each configuration (columns:
placement/init/norm, whatever the suite varies), averaged over seeds; and the last layer's W^2 gradient
against depth (Xiong Theorem 1, Fig. 3(c)/(d))."""

from __future__ import annotations

import pandas as pd

from normbench.benches._lm import varying_keys
from normbench.core.tables import Table


def init_tables(frame) -> list[Table]:
    frame = frame[frame["status"] == "ok"]
    if frame.empty:
        return []
    keys = [k for k in varying_keys(frame) if k != "depth"]
    frame = frame.assign(layer=frame["layer"].astype("Int64"))  # a label column, float where rows lack it
    frame = frame.assign(config=frame[keys].astype(str).agg("/".join, axis=1) if keys else frame["placement"])
    tables = [stream_table(frame)]
    size = per_layer(frame, "ln_input_sq_norm", ffn_sites(frame), "{:.2f}")
    jac = per_layer(frame, "ln_jacobian", ffn_sites(frame), "{:.3f}").reindex_like(size).fillna("—")
    both = size.combine(jac, lambda a, b: a + " / " + b)
    tables.append(
        Table(
            "Init: input of each layer's FFN-side norm and the final norm: ‖x‖²/d / ‖J_LN‖₂",
            both.reset_index(),
            [
                "Post-LN/DeepNorm: this is x^{post,5} of Xiong's Lemma 2 (expected 3/2 for Post-LN); "
                "Pre-LN: the stream entering the FFN's norm. ‖J_LN‖₂: exact (SVD of the autograd Jacobian), "
                "mean over tokens; at gain 1 it equals 1/√(var+ε) for LayerNorm (Lemma 3 with the centred norm) and "
                "1/√(mean x²+ε) for RMSNorm (norms/layernorm.py, norms/rmsnorm.py); both closed forms are stored as ln_jacobian_closed. A norm "
                "with batch statistics (BatchNorm) has no per-token Jacobian in train mode: —."
            ],
        )
    )
    grads = per_layer(frame, "ffn_grad_norm_of_mean", "fc2", "{:.3f}").combine(
        per_layer(frame, "ffn_grad_mean_of_norms", "fc2", "{:.3f}"), lambda a, b: a + " (" + b + ")"
    )
    tables.append(
        Table(
            "Init: FFN W² gradient per layer: ‖mean over batches‖_F (mean of per-batch ‖·‖_F)",
            grads.reset_index(),
            [
                "Xiong Fig. 3(a)/(b): grows with the layer index for Post-LN, "
                "about flat for Pre-LN. Loss = the case's objective: next-token cross-entropy, or "
                "the masked-token cross-entropy over the masked positions (objective = masked)."
            ],
        )
    )
    tables.append(last_layer_table(frame))
    if (frame["metric"] == "scale_grad_ratio").any():
        tables.append(scale_table(frame))
    return tables


def scale_table(frame) -> Table:
    """scale_grad_ratio per norm and c, with the 1/c of exact scale invariance beside it."""
    rows = frame[frame["metric"] == "scale_grad_ratio"]
    wide = rows.pivot_table(index="norm", columns="scale", values="value", aggfunc="mean")
    cells = pd.DataFrame(index=wide.index)
    for c in wide.columns:
        cells[f"c={c:g}"] = wide[c].map(lambda v: f"{v:.4g}")
        cells[f"{c:g}·ratio"] = (wide[c] * c).map(lambda v: f"{v:.4f}")
    return Table(
        "Init: scale invariance, ‖∇_W L at cW‖ / ‖∇_W L at W‖ for a Linear(d, d) feeding the norm",
        cells.reset_index(),
        [
            "LN paper §5: a norm whose output is unchanged when W is scaled by c has ∇_W shrinking as 1/c (an "
            "implicit learning-rate decay as ‖W‖ grows); c × ratio = 1 means exact invariance (LayerNorm, RMSNorm, "
            "BatchNorm in train mode, up to ε), DyT is not invariant. fp64, mean over seeds."
        ],
    )


def ffn_sites(frame) -> list[str]:
    sites = frame.loc[frame["metric"] == "ln_input_sq_norm", "site"].dropna().unique()
    return [s for s in sites if s.endswith(".ffn") or s == "final"]


def per_layer(frame, metric: str, sites, fmt: str):
    """(depth, layer) x config, cells formatted; '—' where a config has no such layer."""
    sites = [sites] if isinstance(sites, str) else sites
    rows = frame[(frame["metric"] == metric) & frame["site"].isin(sites)]
    wide = rows.pivot_table(index=["depth", "layer"], columns="config", values="value", aggfunc="mean")
    wide.index = wide.index.set_levels([wide.index.levels[0], wide.index.levels[1].astype(int)])
    return wide.map(lambda v: "—" if v != v else fmt.format(v))


def stream_table(frame) -> Table:
    """||x_l||^2/d of the residual stream, with Xiong's Lemma 2 band for Pre-LN started at the measured x_0."""
    rows = frame[frame["metric"] == "stream_sq_norm"]
    wide = rows.pivot_table(index=["depth", "layer"], columns="config", values="value", aggfunc="mean")
    cells = wide.map(lambda v: "—" if v != v else f"{v:.2f}")
    pre = rows[rows["placement"] == "pre"] if "placement" in rows else rows.iloc[0:0]
    embeds = pre["embed"].dropna().unique() if "embed" in pre else [None]
    for embed in embeds:  # one band per embedding scale: its own measured x₀
        sel = pre if embed is None else pre[pre["embed"] == embed]
        x0 = sel[sel["layer"] == 0].groupby("depth")["value"].mean()
        name = "Lemma 2 band (Pre-LN)" + (f", embed={embed}" if len(embeds) > 1 else "")
        cells[name] = [
            f"{x0[dep] + lay / 2:.2f} – {x0[dep] + 1.5 * lay:.2f}" if dep in x0 else "—"
            for dep, lay in wide.index
        ]
    cells.index = cells.index.set_levels([cells.index.levels[0], cells.index.levels[1].astype(int)])
    return Table(
        "Init: residual stream ‖x_l‖²/d per layer (l = 0: embeddings)",
        cells.reset_index(),
        [
            "Xiong Lemma 2: each Pre-LN layer adds between d/2 and 3d/2 to E‖x‖², so ‖x_l‖²/d lies in "
            "[x₀ + l/2, x₀ + 3l/2]; Xiong's (1 + l/2, 1 + 3l/2) is this with a unit-variance input x₀ = 1. "
            "With embed = n01, x₀ = token + position embeddings, each N(0, 1), so x₀ ≈ 2 (embed = unit: x₀ ≈ 1). "
            "Post-LN/DeepNorm streams are LN outputs (≈ 1). The lemma assumes FFN width d (with d_ff = 4d the "
            "FFN adds 0.32·d, not d/2: claim preln_lemma2_outside_assumptions); its claim pools seeds."
        ],
    )


def last_layer_table(frame) -> Table:
    """W^2 gradient of the last layer (norm of the mean over batches) against depth."""
    rows = frame[(frame["metric"] == "ffn_grad_norm_of_mean") & (frame["site"] == "fc2")]
    last = rows[rows["layer"] == rows["depth"]]
    wide = last.pivot_table(index="config", columns="depth", values="value", aggfunc="mean")
    wide.columns = [f"L={c}" for c in wide.columns]
    cells = wide.map(lambda v: "—" if v != v else f"{v:.3f}")
    return Table(
        "Init: last layer's W² gradient ‖mean over batches‖_F against depth",
        pd.DataFrame(cells).reset_index(),
        [
            "Xiong Theorem 1: O(d√ln d) for Post-LN, independent of L; O(d√(ln d / L)) for Pre-LN "
            "(Fig. 3(c)/(d): ≈ constant for Post-LN, decreasing for Pre-LN)."
        ],
    )
