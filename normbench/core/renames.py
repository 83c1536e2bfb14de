"""Parameters renamed, and cases moved to a new bench kind, after results were first stored.

A parameter is also a result column, so one table serves everything that meets an old name: suites accept
the old spelling as an alias (suite/bench_table.py), case ids hash the first spelling so every id stays what
it was (core/case.py), and `normbench upgrade` renames the columns of older runs (results/upgrade.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

RENAMES: dict[int, dict[str, dict[str, str]]] = {
    3: {
        # One width, one name: `d`, as the jacobian, init and stability benches already called it and as the
        # papers write it (Xiong et al. 2020, Lemma 3: ||J_LN(x)|| = O(sqrt(d)/||x||)). And `warmup` meant
        # untimed calls in these two kinds but learning-rate warm-up steps in stability (the papers' sense):
        # the timer's meaning gets its own name.
        "latency": {"hidden": "d", "warmup": "warmup_calls"},
        "block": {"hidden": "d", "warmup": "warmup_calls"},
    },
}


@dataclass(frozen=True)
class Move:
    """Cases of kind `old` with `key` = `value` are kind `new` since a schema version (`key` = `stays`, its old
    default, keeps the old kind). first: what those cases hashed that the new kind lacks (case ids hash it
    back in); dropped: the old kind's parameters the new kind lacks; left: those the old kind lost itself."""

    old: str
    key: str
    value: str
    stays: str
    new: str
    first: dict[str, Any]
    dropped: tuple[str, ...]
    left: tuple[str, ...]


# The encoder-decoder was the stability bench's `model = "encdec"` until schema 4 (benches/encdec.py).
FIRST = dict(model="encdec", objective="causal", mask_prob=0.15, data="text", corpus_dir="", seq=64)
ENCDEC_ONLY = ("enc_depth", "dec_depth", "task", "task_words", "min_len", "max_len")
DROPPED = (*FIRST, "batching", "segment")
ENCDEC = Move("stability", "model", "encdec", "lm", "encdec", FIRST, DROPPED, ("model", *ENCDEC_ONLY))
MOVES: dict[int, list[Move]] = {4: [ENCDEC]}


def moved(kind: str, params: dict[str, Any], since: int = 0) -> tuple[str, tuple[str, ...]]:
    """(today's kind, the parameters to drop) of a case stored as `kind` with `params` after version `since`."""
    drop: tuple[str, ...] = ()
    for version in sorted(MOVES):
        for move in MOVES[version] if version > since else ():
            if kind != move.old:
                continue
            if params.get(move.key) == move.value:
                kind, drop = move.new, drop + move.dropped
            else:
                drop += move.left
    return kind, tuple(k for k in dict.fromkeys(drop) if k in params)


def first_spelling(kind: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(kind, params) as the case was spelled when its id was first minted (what a case id hashes)."""
    for version in sorted(MOVES, reverse=True):
        for move in MOVES[version]:
            if kind == move.new:
                kind, params = move.old, {**move.first, **params}
    return kind, first_spellings(kind, params)


# Parameters removed after results were stored, per bench kind: {name: (value, why)}. Every case run since has
# behaved as `value` did, so a suite giving that value (an older run's stored suite on --resume) still reads;
# any other value is refused with `why` (suite/bench_table.py). Case ids never hashed one at its default, so
# they stay what they were.
RETIRED: dict[str, dict[str, tuple[Any, str]]] = {
    "latency": {
        "layout": (
            "fixed",
            'removed: `layout = "shift"` did not make unchanged runs compare as unchanged more often than the '
            "default (docs/methodology.md, Paired rounds; CHANGELOG)",
        ),
    },
}


def retired(kind: str, name: str) -> tuple[Any, str] | None:
    """(the value every current case behaves as, why it was removed) of a removed parameter, else None."""
    return RETIRED.get(kind, {}).get(name)


def renamed(kind: str, since: int = 0) -> dict[str, str]:
    """{old: new} of one bench kind over every version after `since` (chained: a -> b -> c gives a -> c)."""
    out: dict[str, str] = {}
    for version in sorted(RENAMES):
        if version <= since:
            continue
        step = RENAMES[version].get(kind, {})
        out = {old: step.get(new, new) for old, new in out.items()}
        out.update({old: new for old, new in step.items() if old not in out})
    return out


def first_spellings(kind: str, params: dict[str, Any]) -> dict[str, Any]:
    """`params` under the names they had when case ids were first minted (what a case id hashes)."""
    back = {new: old for old, new in renamed(kind).items()}
    return {back.get(k, k): v for k, v in params.items()}
