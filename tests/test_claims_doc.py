"""docs/claims.md names every registered claim and every documented disagreement's range."""

from __future__ import annotations

from pathlib import Path

from normbench.analysis.claims import all_claims

DOC = (Path(__file__).parent.parent / "docs" / "claims.md").read_text(encoding="utf-8")


def test_every_claim_is_documented():
    missing = [name for name in all_claims() if f"`{name}`" not in DOC]
    assert not missing, f"docs/claims.md lacks {missing}"


def test_every_disagreement_is_documented_with_its_range():
    for name, c in all_claims().items():
        if c.disagreement is not None:
            assert f"[{c.disagreement.low:g}, {c.disagreement.high:g}]" in DOC, name
