"""Byte-level corpora for the training benches, each identified by the SHA-256 of its exact bytes.

Details: docs/methodology.md, "The corpus"."""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import sysconfig
from pathlib import Path

from normbench.data import codegen, textgen
from normbench.data.token_data import CorpusError, TokenData, entropy_nats

HELD_OUT_EVERY = 10  # part i (paragraph or file) is held out when i % 10 == 9
# SHA-256 of b"".join(textgen.paragraphs()): a change to textgen.py must change this line, on purpose.
TEXT_SHA256 = "5831d3a0eaf681461e85aaac50661607e4a316bbadec9c6a3d966d45881436b1"
# SHA-256 of b"".join(codegen.modules()): the generated code corpus, pinned the same way.
CODE_SHA256 = "9607973c21cc5b008f509c53655beb13ff10c833ec1d0bbcd11817be1ca7c541"
PINNED = {"text": TEXT_SHA256, "code": CODE_SHA256}  # the generated corpora: the same bytes everywhere


def generated_parts() -> tuple[list[bytes], dict]:
    parts = _checked(textgen.paragraphs(), "text", "textgen.py", "TEXT_SHA256")
    return parts, {"source": "text", "generator": f"textgen seed {textgen.SEED}", "parts": len(parts)}


@functools.lru_cache(maxsize=1)
def _code_modules() -> tuple[bytes, ...]:
    return tuple(codegen.modules())  # ~1 s of pure Python: generated once per process


def generated_code_parts() -> tuple[list[bytes], dict]:
    parts = _checked(list(_code_modules()), "code", "codegen.py", "CODE_SHA256")
    return parts, {"source": "code", "generator": f"codegen seed {codegen.SEED}", "parts": len(parts)}


def _checked(parts: list[bytes], source: str, module: str, constant: str) -> list[bytes]:
    digest, pinned = hashlib.sha256(b"".join(parts)).hexdigest(), PINNED[source]
    if digest != pinned:
        raise CorpusError(
            f"the generated {source} corpus has SHA-256 {digest[:16]}…, expected {pinned[:16]}… "
            f"(normbench/data/{module} changed without updating {constant} in corpus.py)"
        )
    return parts


def directory_parts(root: Path, pattern: str) -> tuple[list[bytes], dict]:
    try:
        files = sorted(f for f in root.glob(pattern) if f.is_file() and not f.name.startswith("."))
        texts = [f.read_bytes() for f in files]
    except OSError as exc:
        raise CorpusError(f"cannot read the corpus in {root}: {exc.strerror or exc}") from None
    blob_len, held = sum(map(len, texts)), sum(len(t) for i, t in enumerate(texts) if i % 10 == 9)
    if blob_len < 10_000 or held < 1_000:
        raise CorpusError(
            f"cannot read the corpus in {root}: found {len(files)} {pattern} files, {blob_len} bytes "
            "(need at least 10 files and 10000 bytes)"
        )
    return texts, {"path": str(root), "files": len(files)}


MIX_CODE_EVERY = 4  # every 4th stdlib file: ~1.2 MB of code beside ~1.3 MB of generated and ~0.8 MB of prose


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def manual_parts() -> list[bytes]:
    """The Python reference manual as plain English text (pydoc's topics, one part per topic, by name)."""
    from pydoc_data.topics import topics

    return [topics[name].encode("utf-8") for name in sorted(topics)]


def mixed_sources() -> tuple[list[tuple[str, list[bytes]]], dict]:
    text, _ = generated_parts()
    code, _ = directory_parts(stdlib_root(), "*.py")
    sources = [("text", text), ("code", code[::MIX_CODE_EVERY]), ("prose", manual_parts())]
    info = {"source": "mix", "python": sys.version.split()[0], "parts": {n: len(p) for n, p in sources}}
    return sources, {**info, "files": sum(len(p) for _, p in sources)}


def split_parts(parts: list[bytes]) -> tuple[list[bytes], list[bytes]]:
    """(training, held-out) parts: part i is held out when i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1."""
    held = [t for i, t in enumerate(parts) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1]
    return [t for i, t in enumerate(parts) if i % HELD_OUT_EVERY != HELD_OUT_EVERY - 1], held


def corpus_split(source: str, directory: str = "") -> tuple[list[bytes], list[bytes], bytes, dict]:
    """(training parts, held-out parts, the whole corpus as hashed, info); a mix is split per source."""
    if source == "mix":
        sources, info = mixed_sources()
        splits = [split_parts(parts) for _, parts in sources]
        blob = b"".join(b"".join(parts) for _, parts in sources)
        return [t for tr, _ in splits for t in tr], [t for _, h in splits for t in h], blob, info
    parts, info = corpus_parts(source, directory)
    train, held = split_parts(parts)
    return train, held, b"".join(parts), info


def corpus_parts(source: str, directory: str = "") -> tuple[list[bytes], dict]:
    if source == "mix":
        sources, info = mixed_sources()
        return [t for _, parts in sources for t in parts], info
    if source == "text" and not directory:
        return generated_parts()
    if source == "code":
        return generated_code_parts()
    if source == "text":
        parts, info = directory_parts(Path(directory), "*")
        return parts, {"source": "text", **info}
    root = Path(directory) if directory else stdlib_root()
    parts, info = directory_parts(root, "*.py")
    return parts, {"source": "stdlib", "python": sys.version.split()[0], **info}


@functools.lru_cache(maxsize=8)
def read_digest(source: str, directory: str, cwd: str = "") -> tuple[str | None, str | None]:
    """(SHA-256 of the corpus, None), or (None, why it cannot be read): the corpus is read once for both
    the case identity and the suite's validation. `cwd` keys the memo: a relative corpus_dir read from
    another folder is another corpus."""
    try:
        parts, _ = corpus_parts(source, directory)
    except CorpusError as exc:
        return None, str(exc)
    return hashlib.sha256(b"".join(parts)).hexdigest(), None


def data_identity(source: str, directory: str = "") -> str:
    """The SHA-256 a case on this text will record: pinned for the generated text, else read now.
    An unreadable directory gets a marker (validation refuses it: corpus_problem)."""
    if source in PINNED and not directory:
        return PINNED[source]
    return read_digest(source, directory, os.getcwd())[0] or "unreadable"


def corpus_problem(source: str, directory: str = "") -> str | None:
    """Why the corpus of a case cannot be read (a missing or too small corpus_dir), or None: a suite
    naming one is refused by `validate`, not failed case by case at run time."""
    if source not in ("text", "stdlib", "mix") or (source == "text" and not directory):  # code: generated
        return None
    return read_digest(source, directory, os.getcwd())[1]


def byte_corpus(source: str = "text", directory: str = "") -> TokenData:
    import torch

    train_parts, held_parts, blob, info = corpus_split(source, directory)
    train_bytes, held = b"".join(train_parts), b"".join(held_parts)
    lut, vocab = byte_vocabulary(blob)
    train, held_out = (
        lut[torch.frombuffer(bytearray(b), dtype=torch.uint8).long()] for b in (train_bytes, held)
    )
    counts = torch.bincount(train, minlength=vocab).double()
    return TokenData(
        train=train[None, :],
        held_out=held_out[None, :],
        vocab=vocab,
        unigram_entropy=entropy_nats(counts.tolist()),
        optimal_loss=None,
        unigram_logp=smoothed_unigram_logp(counts),
        text=(train_bytes, held),
        byte_ids=lut,
        info={
            **info,
            "files": info.get("files", info.get("parts")),
            "bytes": len(blob),
            "sha256": hashlib.sha256(blob).hexdigest(),
            "held_out_unigram_xent": float(-smoothed_unigram_logp(counts)[held_out].mean()),
        },
    )


def byte_vocabulary(blob: bytes):
    """(lut, vocab): lut maps each byte value that occurs to a compact id 0..vocab-1 (others to -1)."""
    import torch

    counts = torch.bincount(torch.frombuffer(bytearray(blob), dtype=torch.uint8).long(), minlength=256)
    present = torch.nonzero(counts).flatten()
    lut = torch.full((256,), -1, dtype=torch.long)
    lut[present] = torch.arange(len(present))
    return lut, len(present)


def smoothed_unigram_logp(train_counts):
    """log p of the add-one-smoothed unigram model of the training text (every id gets p > 0)."""
    import torch

    return torch.log((train_counts + 1) / (train_counts + 1).sum()).float()
