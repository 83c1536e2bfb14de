"""How much each corpus's training batches vary, against the i.i.d. floor: the token-histogram ratio
r = √mean‖h_B − p‖² / √mean((1 − Σp²)/n_B) (data/histogram.py) of the batches the stability bench would
train on (the same batch streams, seeds and generators), per corpus and batching. r = 1: batches look like
i.i.d. tokens; r < 1: every batch is alike; r > 1: batches differ in content, the condition under which
batch statistics fluctuate (PowerNorm, Shen et al. 2020, §3). The figures behind docs/results.md
"Batch composition".

    python scripts/experiments/batch_variation.py [--batches 1000] [--batch 16] [--seq 64] [--data text,code,stdlib,mix]
                                                  [--max-tokens 1152]  (padded/bucketed under a token budget)
                                                  [--corpus-dir DIR]   (your own text, as data = "text" with corpus_dir)

Deterministic (seeded); it reads the corpora and trains nothing.
"""

from __future__ import annotations

import argparse
import itertools

from normbench.benches._lm.batches import batches, pool, sample_tokens
from normbench.benches._lm.training import TrainSpec
from normbench.data import load_data
from normbench.data.histogram import HistogramVariation, pool_distribution


def variation(data, spec: TrainSpec, n_batches: int) -> dict:
    pad_id = data.vocab + 1  # any id outside the vocabulary: the histogram reads real tokens only
    hist = HistogramVariation(pool_distribution(pool(data, spec, 0), data.vocab))
    padded = positions = 0
    for batch in itertools.islice(
        batches(data, spec, 0, spec.data_seed, spec.data_seed + 3, pad_id), n_batches
    ):
        hist.add(sample_tokens(batch, spec.objective))
        positions += batch.inputs.numel()
        padded += 0 if batch.pad is None else int(batch.pad.sum())
    return {
        **hist.result(),
        "pad_fraction": padded / positions,
        "real_per_batch": (positions - padded) / n_batches,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--data", default="text,stdlib,mix")
    ap.add_argument("--batching", default="windows,padded,bucketed")
    ap.add_argument("--segment", default="sentence")
    ap.add_argument("--max-tokens", type=int, default=0, help="padded batching under a token budget")
    ap.add_argument("--corpus-dir", default="", help="measure this folder's text (data = text, corpus_dir)")
    args = ap.parse_args()
    print(
        "| data | batching | r = hist / i.i.d. | ‖h_B − p‖ | i.i.d. floor | pad fraction | real tokens/batch |"
    )
    print("|---|---|---|---|---|---|---|")
    sources = [("text", args.corpus_dir)] if args.corpus_dir else [(s, "") for s in args.data.split(",")]
    for source, folder in sources:
        data = load_data(source, seed=1234, corpus_dir=folder)
        source = folder or source
        for batching in args.batching.split(","):
            spec = TrainSpec(
                lr=1e-3, warmup=0, steps=args.batches, every=10, batch=args.batch, seq=args.seq,
                data_seed=1234, objective="masked", batching=batching, segment=args.segment,
                max_tokens=args.max_tokens if batching != "windows" else 0,
            )  # fmt: skip
            v = variation(data, spec, args.batches)
            print(
                f"| {source} | {batching} | {v['ratio']:.2f} | {v['dist']:.4f} | {v['iid']:.4f} | "
                f"{v['pad_fraction']:.2f} | {v['real_per_batch']:.0f} |"
            )


if __name__ == "__main__":
    main()
