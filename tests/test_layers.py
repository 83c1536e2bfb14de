"""normbench's imports only point down its layers: no module imports a higher layer (module- or function-level)."""

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
    {"models", "jacobian"},  # built from norms
    {"benches"},  # one module per bench kind, registered in the bench registry
    {"analysis"},  # reads results; asks benches through the registry only
    {"suite"},  # validates and expands suites from the bench, norm and claim registries
    {"runner"},  # runs planned cases into a store
    {"executors"},  # the ways to drive the runner (local, Ray)
    {"cli"},  # one file per command
    {"__main__"},  # python -m normbench
]
RANK = {pkg: rank for rank, layer in enumerate(LAYERS) for pkg in layer}

# From a higher layer, the benches layer is reached through its registry only (normbench.benches, i.e.
# Bench, get_bench, all_benches), never by importing a bench module.
BENCH_REGISTRY = {"normbench.benches", "normbench.benches.base"}

# Imports that must stay, each with its reason. (importer module, imported module).
ALLOWED = {
    # selfcheck times a real norm on the latency bench's inputs: it is the engine of `normbench selfcheck`
    # and belongs above benches; it stays in timing/ beside the timers it checks until a selfcheck layer exists.
    ("normbench.timing.selfcheck", "normbench.benches._tensors"),
    ("normbench.timing.selfcheck", "normbench.norms"),
    # A version-1 run's manifest lacks its column declaration: reading it re-expands its stored suite to
    # learn the columns (results/store.py _derive_columns). Only the suite layer can do that; version-2 runs
    # carry their columns and never take this path. The same function-level import of the bench registry
    # gives a store created without declared columns (RunStore.create by hand, as tests do) every kind's;
    # `run` always declares them (executors/session.py).
    ("normbench.results.store", "normbench.suite.expand"),
    ("normbench.results.store", "normbench.suite.load"),
    ("normbench.results.store", "normbench.benches"),
}
# The root package (normbench/__init__.py) is the public facade (normbench.load, __version__): it may
# import any layer, and any module may read normbench.__version__ from it.


def violation(importer: str, target: str) -> str | None:
    """Why importer -> target breaks the layering, or None."""
    src, dst = layer_of(importer), layer_of(target)
    if src is None or dst is None or src == dst or (importer, target) in ALLOWED:
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
        ("normbench.results.env", "normbench", False),  # __version__ from the facade
    ],
)
def test_the_rule_itself(importer, target, broken):
    assert (violation(importer, target) is not None) is broken


def test_function_level_imports_are_seen():
    """An import inside a function body counts as much as one at the top of the module."""
    src = PACKAGE / "core" / "registry.py"  # imports plugin discovery inside Registry.all()
    top_level = {a.module for a in ast.parse(src.read_text()).body if isinstance(a, ast.ImportFrom)}
    assert "normbench.core.plugins" not in top_level
    assert "normbench.core.plugins" in {t for t, _ in imports_of(src)}
