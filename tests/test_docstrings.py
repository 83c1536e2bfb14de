"""No docstring in normbench runs past eight lines outside models/ and norms/, whose docstrings hold equations."""

from __future__ import annotations

import ast

from conftest import REPO

PACKAGE = REPO / "normbench"
LIMIT = 8
EQUATIONS = ("models/", "norms/")  # a block's or a norm's equations and derivation stay beside the code


def long_docstrings() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(EQUATIONS):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                if doc is not None and len(doc.strip().splitlines()) > LIMIT:
                    line = getattr(node, "lineno", 1)
                    out.append(f"normbench/{rel}:{line}: {len(doc.strip().splitlines())} lines")
    return out


def test_no_docstring_is_a_lab_notebook():
    found = long_docstrings()
    assert not found, (
        f"docstrings longer than {LIMIT} lines (keep one line of why and point into docs/methodology.md):\n"
        + "\n".join(found)
    )
