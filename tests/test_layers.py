"""normbench's imports point down its layers, form no circle, and bring torch-free modules in at the top."""

from __future__ import annotations

import ast
import importlib.util
import sys

import pytest
from conftest import REPO

# The parsing lives in scripts/import_graph.py, which prints the same graph for a maintainer.
_spec = importlib.util.spec_from_file_location("import_graph", REPO / "scripts" / "import_graph.py")
graph = sys.modules["import_graph"] = importlib.util.module_from_spec(_spec)  # dataclasses look it up
_spec.loader.exec_module(graph)
PACKAGE, module_name, imports_of, layer_of = (
    graph.PACKAGE,
    graph.module_name,
    graph.imports_of,
    graph.layer_of,
)

# Bottom to top. A module may import its own package, any lower layer, and nothing else: not a higher layer,
# and not a different package on its own layer (siblings stay independent). docs/extending.md "Layers" draws this.
LAYERS = [
    {"core"},  # errors, Param, did_you_mean, tables, stats, Registry, plugin discovery
    {"norms", "timing", "data"},  # what is measured, how time is taken, what models train on
    {"results"},  # the stored dataset (schema, store, manifest, env fingerprint: it reads timing's probes)
    {"models", "selfcheck"},  # built from norms; selfcheck times norms with timing's timers
    {"benches"},  # one module per bench kind, registered in the bench registry
    {"analysis"},  # reads results; asks benches through the registry only
    {"suite"},  # validates and expands suites from the bench, norm and claim registries
    {"runner"},  # runs planned cases into a store
    {"executors"},  # the ways to drive the runner (local, Ray)
    {"ab"},  # base against head in one job: worker processes timing both sides through the benches
    {"cli"},  # one file per command
    {"__main__"},  # python -m normbench
]
RANK = {pkg: rank for rank, layer in enumerate(LAYERS) for pkg in layer}

# From a higher layer, the benches layer is reached through its registry only (normbench.benches, i.e.
# Bench, get_bench, all_benches), never by importing a bench module.
BENCH_REGISTRY = {"normbench.benches", "normbench.benches.base"}

# Imports that must stay, each with its reason. (importer module, imported module). None today.
ALLOWED: set[tuple[str, str]] = set()

# The root package (normbench/__init__.py) is the public facade (normbench.load, __version__): it may
# import any layer; no module imports it (the version is read from normbench/core/version.py).


def violation(importer: str, target: str) -> str | None:
    """Why importer -> target breaks the layering, or None."""
    src, dst = layer_of(importer), layer_of(target)
    if src is not None and dst is None:
        return "imports the root facade (normbench/__init__.py), which sits above every layer"
    if src is None or src == dst or (importer, target) in ALLOWED:
        return None  # the root facade, or within one package
    if src not in RANK or dst not in RANK:
        return f"{src if src not in RANK else dst} is in no layer (add it to LAYERS)"
    if RANK[dst] > RANK[src]:
        return f"{src} (layer {RANK[src]}) imports the higher layer {dst} (layer {RANK[dst]})"
    if RANK[dst] == RANK[src]:
        return f"{src} imports its sibling {dst} on the same layer {RANK[src]}"
    if dst == "benches" and target not in BENCH_REGISTRY:
        return f"reaches into a bench module ({target}) instead of the bench registry (normbench.benches)"
    return None


def all_violations() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = module_name(path)
        for target, line in sorted(imports_of(path)):
            if (why := violation(importer, target)) is not None:
                out.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {importer} -> {target}: {why}")
    return out


def test_no_module_imports_a_higher_layer():
    assert all_violations() == []


def test_every_package_has_a_layer():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert packages | modules <= set(RANK)


def test_every_allowed_import_still_exists():
    """A stale allow-list entry would silently permit a future upward import: each must still be needed."""
    edges = {(module_name(p), t) for p in PACKAGE.rglob("*.py") for t, _ in imports_of(p)}
    assert ALLOWED - edges == set()


@pytest.mark.parametrize(
    "importer, target, broken",
    [
        ("normbench.core.tables", "normbench.analysis.report", True),  # ground floor pointing up
        ("normbench.results.schema", "normbench.benches", True),  # lower layer pointing up
        ("normbench.norms.layernorm", "normbench.timing", True),  # sibling on the same layer
        ("normbench.analysis.records", "normbench.benches.latency", True),  # past the registry
        ("normbench.analysis.records", "normbench.benches", False),  # through the registry
        ("normbench.cli.run", "normbench.core.errors", False),  # pointing down
        ("normbench.results.env", "normbench", True),  # the facade sits above every layer
        ("normbench", "normbench.results.store", False),  # the facade reads any layer
    ],
)
def test_the_rule_itself(importer, target, broken):
    assert (violation(importer, target) is not None) is broken


def test_function_level_imports_are_seen():
    """An import inside a function body counts as much as one at the top of the module."""
    src = PACKAGE / "benches" / "stability.py"  # imports its report (pandas) inside Stability.report()
    top_level = {a.module for a in ast.parse(src.read_text()).body if isinstance(a, ast.ImportFrom)}
    assert "normbench.benches._stability.tables" not in top_level
    assert "normbench.benches._stability.tables" in {t for t, _ in imports_of(src)}


def test_a_kinds_helpers_serve_that_kind_alone():
    """benches/_<kind>/ is imported only by benches/<kind>.py and from inside benches/_<kind>/ (helpers that
    several kinds share live in benches/_<name>.py or benches/_lm/)."""
    kinds = {p.stem for p in (PACKAGE / "benches").glob("*.py") if not p.stem.startswith("_")} - {"base"}
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = module_name(path)
        for target, line in imports_of(path):
            parts = target.split(".")
            if (
                len(parts) > 2
                and parts[1] == "benches"
                and parts[2].lstrip("_") in kinds
                and parts[2][0] == "_"
            ):
                kind = parts[2][1:]
                if importer != f"normbench.benches.{kind}" and not importer.startswith(
                    f"normbench.benches._{kind}"
                ):
                    wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {importer} -> {target}")
    assert wrong == []


def exempt_edges() -> set[tuple[str, str]]:
    return ALLOWED


def test_no_import_circle():
    """No circle among normbench's modules, counting module- and function-level imports: a circle is a
    definition that belongs lower (a lazy import that only hides one still counts)."""
    modules = graph.parse_package()
    edges = {e for e in graph.runtime_edges(modules) if e not in exempt_edges()}
    assert graph.strongly_connected(set(modules), edges) == []


def test_no_package_level_loop():
    """The packages themselves form no loop: the floors drawn from the code are the floors of LAYERS."""
    modules = graph.parse_package()
    edges = {
        (layer_of(a), layer_of(b))
        for a, b in graph.runtime_edges(modules)
        if (a, b) not in exempt_edges() and layer_of(a) and layer_of(b) and layer_of(a) != layer_of(b)
    }
    assert graph.strongly_connected({n for e in edges for n in e}, edges) == []


def hidden_doors() -> list[str]:
    """Function-level imports of torch-free normbench modules (nothing to keep lazy: they belong on top)."""
    modules = graph.parse_package()
    free = graph.torch_free(modules)
    at_top = graph.runtime_edges(modules, in_function=False)
    # inside a pending circle (the other test fails any other) a lazy import keeps the circle from loading
    pending_circle = {(a, b) for c in graph.import_circles(modules) for a in c for b in c}
    return [
        f"{e.importer}:{e.line} imports {e.target} inside a function; it loads no heavy package: import it at the top"
        for m in modules.values()
        for e in m.edges
        if e.in_function
        and not e.type_only
        and e.target in free
        and (e.importer, e.target) not in at_top | exempt_edges() | pending_circle
    ]


def test_no_function_level_import_of_a_torch_free_module():
    assert hidden_doors() == []


def test_a_hidden_door_is_seen(tmp_path):
    """The rule finds a lazy import of a torch-free module, and leaves a lazy import of torch alone."""
    pkg = tmp_path / "normbench"
    (pkg / "core").mkdir(parents=True)
    for path in (pkg / "__init__.py", pkg / "core" / "__init__.py", pkg / "core" / "errors.py"):
        path.write_text("")
    (pkg / "core" / "heavy.py").write_text("import torch\n")
    (pkg / "core" / "user.py").write_text(
        "def f():\n    from normbench.core import errors\n    from normbench.core import heavy\n    import torch\n"
    )
    modules = graph.parse_package(pkg)
    free = graph.torch_free(modules)
    lazy = {(e.importer, e.target) for e in modules["normbench.core.user"].edges if e.in_function}
    assert lazy == {
        ("normbench.core.user", "normbench.core.errors"),
        ("normbench.core.user", "normbench.core.heavy"),
    }
    assert "normbench.core.errors" in free and "normbench.core.heavy" not in free


# Function-level imports that defer nothing, in modules being rewritten elsewhere: (importer, module imported).
NEEDLESS_ALLOWED: set[tuple[str, str]] = set()


def test_no_lazy_import_of_what_is_already_loaded():
    """A function-level import of a module the file (or what it imports at its top) already loads buys
    nothing: it belongs at the top, beside the others."""
    found = [
        f"{e.importer}:{e.line} imports {e.target} inside a function; it is loaded at the top already"
        for e in graph.needless_lazy_imports(graph.parse_package())
        if (e.importer, e.target) not in NEEDLESS_ALLOWED
    ]
    assert found == []


def test_every_needless_allowance_is_still_needed():
    found = {(e.importer, e.target) for e in graph.needless_lazy_imports(graph.parse_package())}
    assert NEEDLESS_ALLOWED - found == set()


def test_a_needless_lazy_import_is_seen(tmp_path):
    """Seen: a re-import of the file's own top-level import, and of a package a normbench module it imports
    at the top loads; not seen: a lazy import that defers a package nothing loaded yet."""
    pkg = tmp_path / "normbench"
    (pkg / "core").mkdir(parents=True)
    for path in (pkg / "__init__.py", pkg / "core" / "__init__.py"):
        path.write_text("")
    (pkg / "core" / "frames.py").write_text("import pandas as pd\n")
    (pkg / "core" / "user.py").write_text(
        "import json\nfrom normbench.core import frames\n\n\n"
        "def f():\n    import json\n    import pandas as pd\n    import torch\n"
    )
    lazy = {(e.target, e.line) for e in graph.needless_lazy_imports(graph.parse_package(pkg))}
    assert lazy == {("json", 6), ("pandas", 7)}


def test_a_circle_is_seen():
    edges = {("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}
    assert graph.strongly_connected({"a", "b", "c", "d"}, edges) == [["a", "b", "c"]]
