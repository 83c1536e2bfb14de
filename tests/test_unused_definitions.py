"""Every top-level function, class and constant in normbench/ is used by the package, scripts/ or an example plugin."""

from __future__ import annotations

import ast
import re
from collections import Counter

from conftest import REPO

PACKAGE = REPO / "normbench"
# Used through a registry, not by name: the decorator puts the definition where the CLI or the runner finds it.
REGISTERING = {"register_norm", "register_bench", "register_plot", "claim", "impl", "callback", "command"}
# Used from outside the repository: the public API users import, and nothing else belongs here.
ALLOWED: set[tuple[str, str]] = set()


def _words(text: str) -> Counter:
    return Counter(re.findall(r"\w+", text))


def _top_level(tree: ast.Module):
    """(line, name, decorator names) of each top-level def, class and assigned name."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            callees = [d.func if isinstance(d, ast.Call) else d for d in node.decorator_list]
            yield node.lineno, node.name, {ast.unparse(c).rpartition(".")[2] for c in callees}
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    yield node.lineno, target.id, set()


def unused_definitions(repo=REPO, allowed=frozenset(ALLOWED)) -> tuple[list[str], set]:
    """A name is used when it occurs as a word in another file of normbench/, scripts/ or the example plugins
    (or pyproject.toml's entry points), or twice in its own module. Words, not imports: a loose test that never flags a used name
    and misses a dead one that shares its name with something live."""
    package = repo / "normbench"
    # the example plugins under tests/ use the API a plugin imports (ok_rows, Param, ...) as a user's would
    folders = ("normbench", "scripts", "tests/plugin_pkg", "tests/plugins")
    sources = {p: p.read_text(encoding="utf-8") for d in folders for p in (repo / d).rglob("*.py")}
    words = {p: _words(t) for p, t in sources.items()}
    elsewhere = Counter(w for c in words.values() for w in c)
    elsewhere.update(_words((repo / "pyproject.toml").read_text(encoding="utf-8")))
    found, seen = [], set()
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        for line, name, decorators in _top_level(ast.parse(sources[path])):
            seen.add((rel, name))
            own = words[path][name]
            if name.startswith("__") or decorators & REGISTERING or (rel, name) in allowed:
                continue
            if own <= 1 and elsewhere[name] - own == 0:
                found.append(f"normbench/{rel}:{line}: {name}")
    return found, seen


def test_every_top_level_definition_is_used():
    found, seen = unused_definitions()
    assert not found, "used by no file (delete it, or use it):\n  " + "\n  ".join(found)
    stale = ALLOWED - seen
    assert not stale, f"ALLOWED names what no longer exists (remove them): {sorted(stale)}"


def test_the_check_finds_what_no_file_uses(tmp_path):
    (tmp_path / "normbench").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project.scripts]\nnb = "normbench.cli:main"\n')
    (tmp_path / "normbench" / "cli.py").write_text(
        "LIMIT = 3\nUNUSED = 4\n\n\ndef main():\n    helper(LIMIT)\n\n\ndef helper(x):\n    return x\n\n\n"
        "def dead():\n    pass\n\n\n@register_norm\nclass Found:\n    pass\n"
    )
    (tmp_path / "normbench" / "other.py").write_text("def only_a_script_uses():\n    pass\n")
    (tmp_path / "scripts" / "tool.py").write_text("from normbench.other import only_a_script_uses\n")
    found, seen = unused_definitions(tmp_path, frozenset())
    assert [f.rpartition(" ")[2] for f in found] == ["UNUSED", "dead"]
    assert ("cli.py", "Found") in seen
