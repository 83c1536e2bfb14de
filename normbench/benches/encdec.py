"""Training stability of a small encoder-decoder on a generated translation-like task (models/encdec.py,
data/seq2seq.py): Post-LN vs Pre-LN vs DeepNorm with Table 1's encoder-decoder constants, DeepNet's control
groups, and a batch-statistics norm in the encoder (PowerNorm's IWSLT14 setting); the model update and the
norm inputs split by side (DeepNet Thm 4.3). The training loop is the LM's (_lm/training.py), given this
model's batches, loss and probe (_encdec/training.py). Details: docs/methodology.md, "Training stability"."""

from __future__ import annotations

from normbench.benches._encdec.params import ENCDEC_PARAMS, encdec_problems, pairs_identity
from normbench.benches._lm import MODEL_PARAMS, LMBench, norm_mixes_tokens
from normbench.benches._lm.trained import TRAIN_PARAMS, TrainedBench, judged
from normbench.benches.base import register_bench

# the LM's text and objective, which an encoder-decoder trained on generated pairs does not read
TEXT_ONLY = ("objective", "mask_prob", "seq", "data", "corpus_dir")


@register_bench
class EncDec(TrainedBench):
    kind = "encdec"
    description = (
        "short encoder-decoder training runs on generated pairs: loss, accuracy, divergence, and the model "
        "update and norm inputs of each side"
    )
    all_impls_by_default = False  # a suite naming a norm gets its baseline (nn.Module) implementation
    labels = LMBench.labels  # the same label columns as the LM's (no corpus: data_files stays empty)

    params = {
        **{k: v for k, v in MODEL_PARAMS.items() if k not in TEXT_ONLY},
        **ENCDEC_PARAMS,
        **TRAIN_PARAMS,
    }

    def check_case(self, params, norm, impl):
        mixes = norm is not None and norm_mixes_tokens(norm)
        return encdec_problems(params, mixes, norm) + super().check_case(params, norm, impl)

    def identity(self, params):
        return {"data": pairs_identity(params)}  # generated pairs, not the corpus

    def run_case(self, case, ctx):
        from normbench.benches._encdec.case import train_case

        result, rows = train_case(case, ctx)
        return judged(result, rows, case.params)

    def report(self, frame, opts):
        from normbench.benches._encdec.tables import encdec_tables

        return encdec_tables(frame)
