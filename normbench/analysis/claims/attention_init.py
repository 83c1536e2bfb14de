"""DeepNet's Lemma 4.1 at initialization, reported: per layer, the self-attention output's size over its
input's and the value path's (x W^V W^O) over the input's, for the Post-LN and DeepNorm decoder-only
models of the init bench (benches/_init/attention_probe.py). No threshold: the lemma states an equal
bound (Θ), not a number; the value path's expected size (1 under Xavier, β² under DeepNorm's init) is
printed beside it."""

from __future__ import annotations

from normbench.analysis.claims import NO_DATA, REPORTED, Verdict, claim
from normbench.analysis.claims.stats import fmt_ci, mean_ci, seeds_text
from normbench.analysis.claims.xiong import init_rows

DEEPNET = "Wang et al. 2022 (DeepNet, arXiv:2203.00555)"
PLACEMENTS = ("post", "deepnorm")  # Post-LN and DeepNorm: the lemma is used for their bound (§4.2)


def expected_value_path(init: str, depth: int) -> float | None:
    """E‖x W^V W^O‖/‖x‖ at init for d × d Xavier-normal matrices of gain g: g² (1 under Xavier; β² =
    (8N)^(-1/2) under DeepNorm's decoder-only init); None where the gain varies by layer."""
    return {"xavier": 1.0, "deepnorm": (8 * depth) ** -0.5}.get(init)


@claim(
    "deepnet_attention_bound_at_init",
    source=f"{DEEPNET}, §4.2, Lemma 4.1: 'Given X = (x_1, …, x_n)^T ∈ R^(n×d), where var(x_i) = 1, mean(x_i) = 0 "
    "and q_i ∈ R for all i ∈ [1, n], it satisfies that softmax(q_1, …, q_n) X =Θ= x_i' (equal bound of "
    "magnitude), hence 'W^Q and W^K do not change the bound of attention output's magnitude'",
    statement="At initialization, per layer of a Post-LN or DeepNorm decoder-only model, the self-attention "
    "output over its input and the value path x W^V W^O over its input (RMS over the tokens of one batch): "
    "the output stays within the value path's size, which only W^V and W^O set",
    threshold="none (REPORTED): the lemma is an equal-bound statement (Θ), not a tolerance. Reported per "
    "placement, init and depth: the per-layer seed means, the value path beside its expectation (1 under "
    "Xavier, β² = (8N)^(-1/2) under DeepNorm's init) and the 95% t-interval over seeds of the layer-mean "
    "attention output over input",
)
def deepnet_attention_bound_at_init(frame):
    out, value = init_rows(frame, "attn_out_ratio"), init_rows(frame, "attn_value_path_ratio")
    if out.empty or "placement" not in out:
        return Verdict(
            NO_DATA, "needs init-bench runs of Post-LN or DeepNorm with the attention probe's rows"
        )
    keys = ["placement", "init", "depth"]
    both = out.merge(value[["case_id", "layer", "value"]], on=["case_id", "layer"], suffixes=("", "_value"))
    both = both[both["placement"].isin(PLACEMENTS) & (both["objective"] == "causal")]
    if both.empty:
        return Verdict(NO_DATA, "needs causal (decoder-only) init runs of Post-LN or DeepNorm")
    parts, cis, seeds = [], [], []
    for (placement, init, depth), g in both.groupby(keys, sort=True):
        layers = g.groupby("layer")[["value", "value_value"]].mean()
        per_seed = g.groupby("seed")["value"].mean()
        m, lo, hi = mean_ci(per_seed)
        expected = expected_value_path(init, int(depth))
        shrink = (layers["value"] / layers["value_value"]).mean()
        parts.append(
            f"[{placement}/{init} L={depth}] attention/input {per_layer(layers['value'])} (layer mean {m:.3g}); "
            f"value path/input {layers['value_value'].min():.3g}–"
            f"{layers['value_value'].max():.3g}"
            + (f" (expected {expected:.3g})" if expected is not None else "")
            + f"; attention/value path {shrink:.2f}"
        )
        cis.append(f"{placement}/{init} L={depth}: {fmt_ci(lo, hi)}")
        seeds += list(g["seed"])
    return Verdict(REPORTED, "; ".join(parts), seeds_text(seeds), "; ".join(cis))


def per_layer(values) -> str:
    """Every layer's value for a shallow model; layers 1 and 2, the range of the rest and the last for a deep one."""
    v = list(values)
    if len(v) <= 8:
        return "per layer " + " ".join(f"{x:.3g}" for x in v)
    rest = v[2:-1]
    return f"layer 1 {v[0]:.3g}, 2 {v[1]:.3g}, 3–{len(v) - 1} {min(rest):.3g}–{max(rest):.3g}, {len(v)} {v[-1]:.3g}"
