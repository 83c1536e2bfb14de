"""Every pointer to a docs heading (`docs/X.md, "Heading"` in code and docs, `X.md#anchor` links) names one that exists."""

from __future__ import annotations

import re

from conftest import REPO

DOCS = REPO / "docs"
# `docs/methodology.md, "Paired rounds"` or `methodology.md ("Pages"`; a comment's or docstring's line breaks
# are joined first, so a pointer may wrap
POINTER = re.compile(r"(?:docs/)?([\w-]+)\.md(?:,\s*|\s+\(?|\s*\()\"([^\"={}]{2,80})\"")
LINK = re.compile(r"\]\((?:(?:docs/)?([\w-]+)\.md)?#([\w-]+)\)")
# Files whose docstrings are being rewritten elsewhere: the heading each should point to once they are.
PENDING: dict[str, str] = {}


def headings(doc: str) -> list[str]:
    path = REPO / "README.md" if doc == "README" else DOCS / f"{doc}.md"
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.lstrip("#").strip() for line in lines if re.match(r"#{1,6} ", line)]


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def pointer_sources():
    for folder in ("normbench", "scripts", "tests"):
        yield from (p for p in sorted((REPO / folder).rglob("*.py")) if p.name != "test_doc_pointers.py")
    yield from sorted(DOCS.glob("*.md"))
    yield from (REPO / name for name in ("README.md", "CHANGELOG.md", "Makefile"))


def broken_pointers(text: str, own_doc: str | None = None) -> list[str]:
    """The pointers in `text` whose heading is missing; `own_doc` resolves a bare `#anchor` link."""
    joined = re.sub(r"\n\s*(?:#\s*)?", " ", text)
    bad = []
    for doc, heading in POINTER.findall(joined):
        known = headings(doc)
        if known and not any(h.startswith(heading) for h in known):  # a heading's leading words name it
            bad.append(f'{doc}.md, "{heading}"')
    for doc, link in LINK.findall(text):
        doc = doc or own_doc
        if doc and link not in {anchor(h) for h in headings(doc)}:
            bad.append(f"{doc}.md#{link}")
    return bad


def test_every_pointer_names_a_heading_that_exists():
    found = []
    for path in pointer_sources():
        rel = path.relative_to(REPO).as_posix()
        own = path.stem if path.parent == DOCS else ("README" if rel == "README.md" else None)
        bad = broken_pointers(path.read_text(encoding="utf-8"), own)
        if rel in PENDING:
            assert bad, f"{rel} points at headings that exist now: remove it from PENDING"
            continue
        found += [f"{rel}: {b}" for b in bad]
    assert not found, "pointers to no heading:\n  " + "\n  ".join(found)


def test_pending_pointers_are_headings_that_exist():
    assert not broken_pointers("\n".join(PENDING.values()))


def test_a_missing_heading_is_found_wherever_the_pointer_wraps():
    assert broken_pointers('see docs/methodology.md, "Paired\n    rounds"') == []
    assert broken_pointers('# docs/methodology.md,\n# "Paired rounds"') == []
    assert broken_pointers('Details: docs/methodology.md, "Notes from the code".') == [
        'methodology.md, "Notes from the code"'
    ]
    assert broken_pointers("[rounds](methodology.md#paired-rounds), [x](ci.md#no-such-part)") == [
        "ci.md#no-such-part"
    ]


def test_the_architecture_page_names_only_files_that_exist():
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([\w/.-]+\.(?:py|toml|sh|md))`", text)) | set(
        re.findall(r"`([a-z_]+/[\w/.-]*)`", text)
    )
    package = REPO / "normbench"
    missing = [
        n
        for n in sorted(named)
        if not ((REPO / n).exists() or (package / n).exists() or ("/" not in n and any(package.rglob(n))))
    ]
    assert not missing, f"docs/architecture.md names what is not there: {missing}"


def test_every_make_target_the_docs_name_exists():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([\w-]+):", makefile, re.M))
    named = {
        (path.name, target)
        for path in [*DOCS.glob("*.md"), REPO / "README.md", REPO / "scripts" / "experiments" / "README.md"]
        for target in re.findall(r"`make ([\w-]+)", path.read_text(encoding="utf-8"))
    }
    missing = sorted(n for n in named if n[1] not in targets)
    assert not missing, f"no such Makefile target: {missing}"
