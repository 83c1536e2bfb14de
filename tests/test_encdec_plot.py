"""The encoder-decoder figure draws DeepNet's LayerNorm runs on fixed batches only (never the PowerNorm cell's
other encoder norms under a token budget) and its legend names every configuration it draws."""

from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("matplotlib")


def _run(placement, init, warmup, depth, *, norm="layernorm", impl="module", max_tokens=0):
    params = dict(placement=placement, init=init, warmup=warmup, depth=depth, enc_depth=0, dec_depth=0)
    rows = []
    for step in range(0, 31, 10):
        rows.append({"metric": "loss", "step": step, "value": 3.0 - step / 20})
        rows.append({"metric": "model_update", "step": step, "value": 1.0 + step})
        rows.append({"metric": "enc_update", "step": step, "value": 0.5 + step})
    rows.append({"metric": "unigram_loss", "step": None, "value": 3.4})
    case = f"{placement}{init}{warmup}{depth}{norm}{impl}{max_tokens}"
    return [
        {
            **r,
            **params,
            "norm": norm,
            "impl": impl,
            "max_tokens": max_tokens,
            "seed": 0,
            "steps": 30,
            "case_id": case,
        }
        for r in rows
    ]


def test_powernorm_cell_left_out_and_every_config_in_the_legend(tmp_path, monkeypatch):
    from normbench.analysis.plots import encdec

    drawn = []
    monkeypatch.setattr(encdec, "save", lambda fig, out_dir, name, fmt: drawn.append(fig) or out_dir / name)
    frame = pd.DataFrame(
        _run("post", "xavier", 0, 18)
        + _run("deepnorm", "deepnorm", 0, 6)  # not on the last panel, which holds the legend
        + _run("pre", "xavier", 100, 6, norm="batchnorm", impl="official", max_tokens=256)
        + _run("pre", "xavier", 100, 6, max_tokens=256)
    )
    encdec.encdec_loss_and_side_updates(frame, tmp_path, machine="test", fmt="png")
    (fig,) = drawn
    legend = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    assert legend == ["deepnorm/deepnorm", "post/xavier", "unigram model (learned nothing)"]
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["6L-6L", "18L-18L"]
