"""DeepNet's Lemma 4.1 at initialization (Wang et al. 2022, §4.2): softmax(q)·X has the same magnitude bound
as the x_i it averages, so an attention sub-layer's output is bounded by its value path x W^V W^O alone
(W^Q, W^K do not enter the bound). Per layer, on one batch of the init bench's model: the attention
output's size over its input's, and the value path's over the input's (RMS over tokens); their ratio is
what the softmax's averaging takes off. Rows: attn_out_ratio, attn_value_path_ratio (site "attn")."""

from __future__ import annotations

import math

from normbench.data import sample_windows


def attention_rows(model, data, p) -> list[dict]:
    """One forward at init with hooks on every block's self-attention; no gradient, weights untouched."""
    import torch

    generator = torch.Generator().manual_seed(p["data_seed"] + 11)  # apart from init_rows' batches
    x, _ = sample_windows(data.train, p["batch"], p["seq"], generator)
    sums = [[0.0, 0.0, 0.0] for _ in model.blocks]  # per layer: Σ‖x‖², Σ‖Attn(x)‖², Σ‖x W^V W^O‖²

    def hook(layer: int, attn, args, kwargs, out):
        h = args[0] if args else kwargs["x"]
        value_path = attn.out_proj(attn.v_proj(h))
        for i, t in enumerate((h, out, value_path)):
            sums[layer][i] += float(t.double().pow(2).sum())

    handles = [
        block.attn.register_forward_hook(
            lambda attn, args, kwargs, out, layer=layer: hook(layer, attn, args, kwargs, out),
            with_kwargs=True,
        )
        for layer, block in enumerate(model.blocks)
    ]
    try:
        with torch.no_grad():
            model.head_input(x.to(p["device"]))
    finally:
        for handle in handles:
            handle.remove()
    rows = []
    for layer, (inp, out, value) in enumerate(sums, start=1):
        for metric, v in (("attn_out_ratio", out), ("attn_value_path_ratio", value)):
            rows.append(
                {
                    "metric": metric,
                    "unit": "ratio",
                    "value": math.sqrt(v / inp),
                    "layer": layer,
                    "site": "attn",
                }
            )
    return rows
