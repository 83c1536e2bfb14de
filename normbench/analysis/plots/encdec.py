"""The encoder-decoder's figure (the encdec bench's runs): per depth, the training loss, and the
model update of each side against step — the decoder's output ΔF_ed solid, the encoder's ΔF_e dashed
(DeepNet Thm 4.3: the encoder's update reaches the decoder through cross-attention); seeds as thin lines.
DeepNet's LayerNorm runs on its fixed batches only: the PowerNorm paper's encoder cell (other encoder norms,
token-budget batches) answers another question, in its own table."""

from __future__ import annotations

from normbench.analysis.plots import register_plot, save
from normbench.analysis.plots.stability import config_label


def layers(rows):
    """'NL-ML' per row: enc_depth and dec_depth, each defaulting to depth."""
    n = rows["enc_depth"].where(rows["enc_depth"] > 0, rows["depth"]).astype(int)
    m = rows["dec_depth"].where(rows["dec_depth"] > 0, rows["depth"]).astype(int)
    return [f"{a}L-{b}L" for a, b in zip(n, m, strict=True)]


def by_depth(label: str) -> tuple[int, ...]:
    return tuple(int(part[:-1]) for part in label.split("-"))


@register_plot("encdec")
def encdec_loss_and_side_updates(frame, out_dir, *, machine, fmt):
    import matplotlib.pyplot as plt

    rows = frame[frame["metric"].isin(["loss", "model_update", "enc_update"])]
    rows = rows[rows["steps"] > 1] if "steps" in rows else rows  # the one-step runs have one point each
    if "max_tokens" in rows:
        rows = rows[rows["max_tokens"].fillna(0) == 0]
    rows = rows[(rows["norm"] == "layernorm") & (rows["impl"] == "module")]
    if rows.empty:
        return []
    rows = rows.assign(config=rows.apply(config_label, axis=1), depth=layers(rows))
    configs = sorted(rows["config"].unique())
    colour = {c: plt.cm.tab10(i % 10) for i, c in enumerate(configs)}
    depths = sorted(rows["depth"].unique(), key=by_depth)
    unigram = frame[frame["metric"] == "unigram_loss"]
    unigram = unigram.assign(depth=layers(unigram)).groupby("depth")["value"].median()
    fig, axes = plt.subplots(2, len(depths), figsize=(4.8 * len(depths), 7.5), squeeze=False, sharey="row")
    for j, depth in enumerate(depths):
        at = rows[rows["depth"] == depth]
        loss_ax, update_ax = axes[0][j], axes[1][j]
        for (config, seed), run in at.groupby(["config", "seed"]):
            label = config if seed == at[at["config"] == config]["seed"].min() else None
            loss = run[run["metric"] == "loss"].sort_values("step")
            loss_ax.plot(loss["step"], loss["value"], color=colour[config], lw=1, alpha=0.8, label=label)
            for metric, style in (("model_update", "-"), ("enc_update", "--")):
                upd = run[(run["metric"] == metric) & (run["step"] > 0)].sort_values("step")
                update_ax.plot(upd["step"], upd["value"], style, color=colour[config], lw=1, alpha=0.8)
        if depth in unigram:
            loss_ax.axhline(unigram[depth], color="k", ls="--", lw=1, label="unigram model (learned nothing)")
        loss_ax.set_title(depth, fontsize=10)
        loss_ax.set_ylabel("training loss (nats/target token)" if j == 0 else "")
        update_ax.set_xscale("log")
        update_ax.set_yscale("log")
        update_ax.set_xlabel("step")
        update_ax.set_ylabel("ΔF per token: decoder (solid), encoder (dashed)" if j == 0 else "")
        for ax in (loss_ax, update_ax):
            ax.grid(True, which="both", alpha=0.3)
    # the legend names every config drawn, not only those of the panel it sits on
    handles = [plt.Line2D([], [], color=colour[c], lw=1, label=c) for c in configs]
    handles.append(plt.Line2D([], [], color="k", ls="--", lw=1, label="unigram model (learned nothing)"))
    axes[0][-1].legend(handles=handles, fontsize=8)
    fig.suptitle(f"Encoder-decoder: loss and each side's model update — {machine}", fontsize=10)
    return [save(fig, out_dir, "stability_encdec_loss_and_updates", fmt)]
