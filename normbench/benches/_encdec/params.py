"""The encoder-decoder's own parameters (the task and the two depths) and its cross-parameter rules. Torch-free:
the suite validator reads them. Each is hashed into a case id only when it differs from its default (core/params.py
`hashed_at_default`), as when they were the stability bench's: every stored case keeps its id (core/renames.py)."""

from __future__ import annotations

from normbench.core.params import Param
from normbench.data.seq2seq import HELD_OUT_PAIRS, TASKS, TRAIN_PAIRS, identity

ENCDEC_PARAMS = {
    "enc_depth": Param(int, 0, minimum=0, hashed_at_default=False, help="encoder layers N (0 = depth)"),
    "dec_depth": Param(int, 0, minimum=0, hashed_at_default=False, help="decoder layers M (0 = depth)"),
    "task": Param(
        str,
        "translate",
        choices=TASKS,
        hashed_at_default=False,
        help="copy, reverse, sort, or translate (a generated lexicon and an adjective-noun reordering)",
    ),
    "task_words": Param(
        int,
        32,
        minimum=2,
        hashed_at_default=False,
        help="the task's word vocabulary (+ PAD, BOS, EOS)",
    ),
    "min_len": Param(int, 4, minimum=1, hashed_at_default=False, help="shortest source, in words"),
    "max_len": Param(int, 16, minimum=1, hashed_at_default=False, help="longest source, in words"),
}


def layers(params) -> tuple[int, int]:
    """(N, M) of an encoder-decoder case: enc_depth and dec_depth, each defaulting to depth (N = M = depth
    is "depth L-L", the papers' 18L-18L)."""
    return params["enc_depth"] or params["depth"], params["dec_depth"] or params["depth"]


def pairs_identity(params) -> str:
    return identity(
        params["task"], params["task_words"], params["min_len"], params["max_len"], params["data_seed"]
    )


def held_out_problem(words: int, min_len: int, max_len: int) -> str | None:
    """Why these lengths and words cannot yield a held-out set (sources never seen in training), or None: with
    fewer distinct sources than the training and held-out pairs together, the training draw takes (nearly)
    all of them and the held-out draw has nothing left to find."""
    need = TRAIN_PAIRS + HELD_OUT_PAIRS
    sources = 0
    for length in range(min_len, max_len + 1):
        sources += words**length
        if sources >= need:
            return None
    return (
        f"task_words = {words} and lengths {min_len}..{max_len} give {sources} distinct sources, fewer than "
        f"the {TRAIN_PAIRS} training and {HELD_OUT_PAIRS} held-out pairs: the held-out set (sources unseen in "
        "training) cannot be drawn; raise task_words or max_len"
    )


def encdec_problems(params, mixes_tokens: bool, norm) -> list[tuple[str, str]]:
    """(key, message) per problem of an encoder-decoder case."""
    problems = []
    if params["d"] % params["heads"]:
        problems.append(("heads", f"{params['heads']} heads do not divide d={params['d']}"))
    if params["min_len"] > params["max_len"]:
        problems.append(("min_len", f"{params['min_len']} is above max_len = {params['max_len']}"))
    elif (why := held_out_problem(params["task_words"], params["min_len"], params["max_len"])) is not None:
        problems.append(("max_len", why))
    if mixes_tokens and params["placement"] == "subln":
        problems.append(
            (
                "placement",
                f"{norm} normalizes over the batch, and Sub-LN's inner norms get no source pad mask; use "
                "another placement (the encoder's other norms take statistics over real source tokens)",
            )
        )
    longest = params["max_len"] + 1  # a target is its source's words and EOS
    if 0 < params["max_tokens"] < longest:
        problems.append(
            ("max_tokens", f"{params['max_tokens']} tokens cannot hold a pair of {longest} tokens")
        )
    return problems
