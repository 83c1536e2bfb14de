"""The default corpus is the same bytes under every Python (3.11 here, 3.12 and 3.13 by subprocess), its
SHA-256 is checked on load and enters the case identity, and `compare` refuses runs on different text."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
from _stores import create_store
from typer.testing import CliRunner

from normbench.cli import app
from normbench.data import CorpusError, corpus, data_identity, load_data, textgen
from normbench.suite.expand import expand
from normbench.suite.load import parse_suite

TEXTGEN = Path(textgen.__file__)
PYENV = Path("/root/.pyenv/versions")


def test_generated_text_matches_the_pinned_hash():
    blob = b"".join(textgen.paragraphs())
    assert hashlib.sha256(blob).hexdigest() == corpus.TEXT_SHA256
    assert blob.isascii() and len(blob) > 1_000_000


@pytest.mark.parametrize("version", ["3.12.1", "3.13.0"])
def test_generated_text_is_identical_under_other_pythons(version):
    python = PYENV / version / "bin" / "python"
    if not python.exists():
        pytest.skip(f"Python {version} is not installed here")
    # textgen.py imports only the standard library: run it as a script, outside this venv
    out = subprocess.run([str(python), "-I", str(TEXTGEN)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [corpus.TEXT_SHA256, str(len(b"".join(textgen.paragraphs())))]


def test_a_changed_generator_is_refused(monkeypatch):
    monkeypatch.setattr(textgen, "SEED", textgen.SEED + 1)
    monkeypatch.setattr(textgen.paragraphs, "__defaults__", (textgen.SEED, textgen.PARAGRAPHS))
    with pytest.raises(CorpusError, match=r"^the generated text corpus has SHA-256 .* expected 5831d3a0"):
        corpus.generated_parts()


def test_loaded_corpus_records_its_hash_and_splits_by_paragraph():
    data = load_data("text", seed=0)
    assert data.info["sha256"] == corpus.TEXT_SHA256 and data.info["source"] == "text"
    parts = textgen.paragraphs()
    held = sum(len(p) for i, p in enumerate(parts) if i % 10 == 9)
    assert data.held_out.shape == (1, held) and data.train.shape == (1, data.info["bytes"] - held)
    assert 2.5 < data.unigram_entropy < 3.5 and data.vocab == len(set(b"".join(parts)))


def _ids(extra: str = "") -> list[str]:
    text = f'name = "t"\n[[bench]]\nkind = "stability"\nnorms = ["layernorm"]\n[bench.params]\n{extra}'
    return [c.case_id for c in expand(parse_suite(text))]


def test_data_hash_is_part_of_the_case_identity(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"x" * 20_000)
    for i in range(9):
        (tmp_path / f"b{i}.txt").write_bytes(b"y" * 2000)
    mine = _ids(f'corpus_dir = "{tmp_path}"\n')
    assert _ids() != mine and _ids() == _ids()
    (tmp_path / "a.txt").write_bytes(b"z" * 20_000)  # the same parameters, other text: another case
    corpus.read_digest.cache_clear()
    assert _ids(f'corpus_dir = "{tmp_path}"\n') != mine
    assert data_identity("text", seed=0) == corpus.TEXT_SHA256
    assert data_identity("markov", seed=3) != data_identity("markov", seed=4)


def _stability_run(root: Path, run_id: str, sha: str) -> None:
    """Three seeds of one stability configuration with fixed final losses, trained on text `sha`."""
    store = create_store(root, {"run_id": run_id, "started": run_id, "env": {"python": "3.11"}, "suite": "t"})
    text = (
        'name = "t"\n[[bench]]\nkind = "stability"\nnorms = ["layernorm"]\n[bench.sweep]\nseed = [0, 1, 2]\n'
    )
    for case in expand(parse_suite(text)):
        rows = [
            {"metric": "final_loss", "unit": "nats", "value": 2.0 + case.params["seed"] / 100},
            {"metric": "data_bytes", "unit": "B", "value": 1.0, "data_files": 1, "data_sha256": sha},
        ]
        store.write_case(case, rows, "ok", None)


def test_compare_refuses_a_data_mismatch(tmp_path):
    _stability_run(tmp_path, "base", "a" * 64)
    _stability_run(tmp_path, "same", "a" * 64)
    _stability_run(tmp_path, "other", "b" * 64)
    same = CliRunner().invoke(app, ["compare", "base", "same", "-r", str(tmp_path), "-f", "plain"])
    assert same.exit_code == 0 and "data differs" not in same.output
    other = CliRunner().invoke(app, ["compare", "base", "other", "-r", str(tmp_path), "-f", "plain"])
    assert "data differs: sha256 aaaaaaaaaaaa -> bbbbbbbbbbbb" in other.output
    line = next(s for s in other.output.splitlines() if "final_loss" in s)
    assert line.lstrip().startswith("x")


def test_the_mix_holds_out_every_tenth_part_of_each_source():
    """data = "mix": the generated prose, every 4th stdlib file and the pydoc topics, each source split
    apart (every 10th of its parts held out), hashed whole like any corpus."""
    train, held, blob, info = corpus.corpus_split("mix")
    sources, _ = corpus.mixed_sources()
    assert [n for n, _ in sources] == ["text", "code", "prose"] and info["parts"]["code"] == len(
        sources[1][1]
    )
    held_set, train_set = set(held), set(train)
    for _, parts in sources:
        assert all(p in held_set for i, p in enumerate(parts) if i % 10 == 9)
        assert all(p in train_set for i, p in enumerate(parts) if i % 10 != 9)
    assert len(train) + len(held) == sum(len(p) for _, p in sources)
    assert data_identity("mix", seed=0) == hashlib.sha256(blob).hexdigest()
    data = load_data("mix", seed=0)
    assert data.info["source"] == "mix" and data.text[0].startswith(sources[0][1][0])
