"""Every command stays thin: its module imports at most three normbench packages besides cli, and its body
(the statements after the options) is at most 30 lines: parse, call one function on a floor below, print."""

import ast
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parent.parent / "normbench" / "cli"
MODULES = sorted(p for p in CLI.glob("*.py") if p.name != "__init__.py")


def packages(tree: ast.Module) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("normbench."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("normbench.")}
    return found - {"cli"}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_a_command_module_imports_at_most_three_packages(path):
    assert len(packages(ast.parse(path.read_text()))) <= 3, sorted(packages(ast.parse(path.read_text())))


@pytest.mark.parametrize("path", [p for p in MODULES if not p.name.startswith("_")], ids=lambda p: p.name)
def test_a_command_body_is_at_most_30_lines(path):
    tree = ast.parse(path.read_text())
    commands = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "command"]
    assert commands, f"{path.name} defines no command()"
    body = commands[0].body
    first = body[1] if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else body[0]
    assert body[-1].end_lineno - first.lineno + 1 <= 30


def test_the_rule_counts_what_it_should():
    tree = ast.parse(
        "from normbench.core.x import a\nimport normbench.results.y\nfrom normbench.cli._c import b\n"
    )
    assert packages(tree) == {"core", "results"}
