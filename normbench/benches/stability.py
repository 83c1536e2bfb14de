"""Training stability of a small decoder-only LM: Post-LN vs Pre-LN vs DeepNorm (and sandwich), with
DeepNet's control groups (Post-LN with and without warmup, Post-LN-init = 1/k_l with warmup), in CPU minutes.
The encoder-decoder is its own kind (encdec.py), trained by the same loop (_lm/training.py).

Details: docs/methodology.md, "Training stability"."""

from __future__ import annotations

from normbench.benches._lm import MODEL_PARAMS, LMBench, data_rows, norm_mixes_tokens
from normbench.benches._lm.trained import TRAIN_PARAMS, TrainedBench, final_rows, judged, train_spec
from normbench.benches.base import register_bench
from normbench.core.params import Param
from normbench.data.padded import BATCHINGS
from normbench.data.segments import SEGMENTS


@register_bench
class Stability(TrainedBench, LMBench):
    kind = "stability"
    description = (
        "short LM training runs: final loss, divergence, model update, norm input growth per placement/init"
    )

    params = {
        **MODEL_PARAMS,
        **TRAIN_PARAMS,
        "batching": Param(
            str,
            "windows",
            choices=BATCHINGS,
            hashed_at_default=False,
            help="windows = random fixed-length windows of the text; padded = whole sentences or lines "
            "(segment), padded to the batch's longest, the pads masked in attention, loss and batch "
            "statistics; bucketed = the same, batches of similar length (fairseq's length order)",
        ),
        "segment": Param(
            str,
            "sentence",
            choices=SEGMENTS,
            hashed_at_default=False,
            help="padded/bucketed: the units, sentence (lines, also split after . ? ! and a space) or line",
        ),
    }

    def run_case(self, case, ctx):
        from normbench.benches._lm.training import train

        p = case.params
        model, data = self.model_and_data(case, ctx)
        family = {k: p[k] for k in ("seq", "objective", "mask_prob", "batching", "segment")}
        result = train(model, data, train_spec(p, **family), p["device"])
        return judged(result, result.rows + data_rows(data) + final_rows(result), p)

    def check_case(self, params, norm, impl):
        return super().check_case(params, norm, impl) + padding_problems(params, norm)

    def report(self, frame, opts):
        from normbench.benches._stability.tables import stability_tables

        return stability_tables(frame)


def padding_problems(params, norm) -> list[tuple[str, str]]:
    """Padded batching needs a text to cut into units, and a placement whose every norm gets the pad mask."""
    if params["batching"] == "windows":
        if params["max_tokens"]:
            return [
                ("max_tokens", 'a token budget batches whole units; set batching = "padded" or "bucketed"')
            ]
        if params["segment"] != "sentence":
            return [
                (
                    "segment",
                    'segment chooses the units of padded batches; set batching = "padded" or "bucketed"',
                )
            ]
        return []
    if params["data"] == "markov":
        return [
            (
                "batching",
                f'batching = "{params["batching"]}" cuts a text into sentences or lines; the Markov '
                'chain has none (use data = "text", "code", "stdlib" or "mix")',
            )
        ]
    longest = params["seq"] + (params["objective"] == "causal")  # _lm/batches.py unit_length
    if 0 < params["max_tokens"] < longest:
        return [("max_tokens", f"{params['max_tokens']} tokens cannot hold a unit of {longest} tokens")]
    if params["placement"] == "subln" and norm is not None and norm_mixes_tokens(norm):
        return [
            (
                "placement",
                "Sub-LN's inner norms get no pad mask, so batch statistics would count the "
                'padding; use another placement or batching = "windows"',
            )
        ]
    return []
