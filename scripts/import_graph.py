"""normbench's import graph from the source alone (ast, nothing imported): modules, lines, internal edges
(module level or inside a function body), import circles, package-level up-arrows against the layers of
tests/test_layers.py, long files and long functions. tests/test_layers.py reads the same graph.

    python scripts/import_graph.py                  # counts for ./normbench
    python scripts/import_graph.py --list           # ... and every circle, up-arrow, hidden door, long thing
    python scripts/import_graph.py --floors         # the floors the imports draw, top first
    python scripts/import_graph.py --package OTHER/normbench --layers OTHER/tests/test_layers.py
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "normbench"
LAYERS_FILE = REPO / "tests" / "test_layers.py"

# Third-party packages whose import costs startup time (torch alone is ~1 s): a normbench module that loads
# none of them at module level, directly or through its own imports, is "torch-free".
HEAVY = frozenset({"torch", "pandas", "numpy", "pyarrow", "scipy", "matplotlib", "ray"})
LONG_FILE, LONG_FUNCTION = 300, 50


@dataclass(frozen=True)
class Edge:
    importer: str
    target: str
    line: int
    in_function: bool  # inside a function body: runs on the call, not when the module loads
    type_only: bool  # under `if TYPE_CHECKING:`: never runs


@dataclass
class Module:
    name: str
    path: Path
    lines: int
    edges: list[Edge] = field(default_factory=list)
    heavy: set[str] = field(default_factory=set)  # heavy packages it imports at module level
    outside: list[Edge] = field(
        default_factory=list
    )  # imports of modules outside normbench (stdlib, third party)
    long_functions: list[tuple[str, int, int]] = field(default_factory=list)  # (name, line, length)


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(dotted: str, package: Path = PACKAGE) -> bool:
    path = package.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports_with_context(tree: ast.AST):
    """Yield (import node, inside a function body, under TYPE_CHECKING) for every import in the tree."""
    stack = [(tree, False, False)]
    while stack:
        node, in_function, type_only = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, in_function, type_only
            child_in_function = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            child_type_only = type_only or (isinstance(child, ast.If) and _is_type_checking(child))
            stack.append((child, child_in_function, child_type_only))


def _targets(node: ast.Import | ast.ImportFrom, name: str, is_package: bool, package: Path) -> set[str]:
    """The modules an import statement names. `from x import y` counts as importing x.y when x.y is a
    module, else x."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names}
    if node.level:  # relative: resolve against this module's package
        base = name.split(".") if is_package else name.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        target = ".".join([*base, *([node.module] if node.module else [])])
    else:
        target = node.module or ""
    found = set()
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        found.add(sub if is_module(sub, package) else target)
    return found


def parse_module(path: Path, package: Path = PACKAGE) -> Module:
    name = module_name(path, package)
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    module = Module(name, path, len(text.splitlines()))
    root = package.name
    for node, in_function, type_only in _imports_with_context(tree):
        for target in _targets(node, name, path.name == "__init__.py", package):
            top = target.split(".")[0]
            if top == root:
                module.edges.append(Edge(name, target, node.lineno, in_function, type_only))
                continue
            module.outside.append(Edge(name, target, node.lineno, in_function, type_only))
            if top in HEAVY and not in_function and not type_only:
                module.heavy.add(top)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            if length > LONG_FUNCTION:
                module.long_functions.append((node.name, node.lineno, length))
    return module


def parse_package(package: Path = PACKAGE) -> dict[str, Module]:
    return {m.name: m for m in (parse_module(p, package) for p in sorted(package.rglob("*.py")))}


def imports_of(path: Path, package: Path = PACKAGE) -> set[tuple[str, int]]:
    """Every normbench module `path` imports, anywhere in the file (function bodies and TYPE_CHECKING
    blocks included), with the line."""
    return {(e.target, e.line) for e in parse_module(path, package).edges}


def _parents(name: str) -> list[str]:
    """The packages that importing `name` runs first: a.b.c loads a and a.b."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def module_level_loads(modules: dict[str, Module]) -> dict[str, set[str]]:
    """For each module, the normbench modules that importing it runs (itself, its packages, and what they
    import at module level, transitively)."""
    direct = {
        name: {
            t for e in m.edges if not (e.in_function or e.type_only) for t in (e.target, *_parents(e.target))
        }
        for name, m in modules.items()
    }
    loads: dict[str, set[str]] = {}
    for name in modules:
        seen, todo = set(), [name, *_parents(name)]
        while todo:
            current = todo.pop()
            if current in seen or current not in modules:
                continue
            seen.add(current)
            todo.extend(direct[current])
        loads[name] = seen
    return loads


def torch_free(modules: dict[str, Module]) -> set[str]:
    """Modules whose import loads none of HEAVY, directly or through normbench modules at module level."""
    loads = module_level_loads(modules)
    return {name for name in modules if not any(modules[m].heavy for m in loads[name])}


def needless_lazy_imports(modules: dict[str, Module]) -> list[Edge]:
    """Function-level imports that defer nothing: the module is already loaded when the importer loads,
    because the importer (or a normbench module it imports at module level) imports it at the top. Such an
    import belongs at the top of the file."""
    loads = module_level_loads(modules)
    at_top = {
        name: {e.target for e in (*m.edges, *m.outside) if not (e.in_function or e.type_only)}
        for name, m in modules.items()
    }
    found = []
    for name, m in modules.items():
        loaded = set().union(*(at_top[other] for other in loads[name])) | loads[name]
        found += [
            e for e in (*m.edges, *m.outside) if e.in_function and not e.type_only and e.target in loaded
        ]
    return sorted(found, key=lambda e: (e.importer, e.line))


def runtime_edges(modules: dict[str, Module], *, in_function: bool | None = None) -> set[tuple[str, str]]:
    """Distinct (importer, target) pairs between two different modules that run (TYPE_CHECKING dropped);
    in_function=None keeps both kinds."""
    return {
        (e.importer, e.target)
        for m in modules.values()
        for e in m.edges
        if not e.type_only
        and e.importer != e.target
        and (in_function is None or e.in_function == in_function)
    }


def strongly_connected(nodes: set[str], edges: set[tuple[str, str]]) -> list[list[str]]:
    """The graph's cycles as strongly connected components of two or more nodes (Tarjan, iterative)."""
    succ = defaultdict(list)
    for a, b in edges:
        succ[a].append(b)
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(root: str) -> None:
        work = [(root, iter(sorted(succ[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter[0]
                counter[0] += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(succ[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return sorted(out)


def import_circles(modules: dict[str, Module]) -> list[list[str]]:
    """Circles among normbench modules, module- and function-level imports together."""
    edges = {(a, b) for a, b in runtime_edges(modules) if a in modules and b in modules}
    return strongly_connected(set(modules), edges)


def layers_from(test_file: Path = LAYERS_FILE) -> list[set[str]]:
    """The LAYERS list of tests/test_layers.py, read from its source (the test owns the rule)."""
    for node in ast.parse(test_file.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "LAYERS" for t in node.targets):
            return [set(layer) for layer in ast.literal_eval(node.value)]
    raise SystemExit(f"{test_file}: no LAYERS list")


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None  # None: the root package


def package_up_arrows(modules: dict[str, Module], layers: list[set[str]]) -> list[tuple[str, str]]:
    """Module edges (any kind, TYPE_CHECKING included) from a package to a higher layer's or a sibling's."""
    rank = {pkg: r for r, layer in enumerate(layers) for pkg in layer}
    out = []
    for m in modules.values():
        for e in m.edges:
            src, dst = layer_of(e.importer), layer_of(e.target)
            if src and dst and src != dst and src in rank and dst in rank and rank[dst] >= rank[src]:
                out.append((e.importer, e.target))
    return sorted(set(out))


def package_loops(modules: dict[str, Module]) -> list[list[str]]:
    """Circles between packages (normbench.x as one node each), module- and function-level together."""
    edges = {
        (layer_of(a), layer_of(b))
        for a, b in runtime_edges(modules)
        if layer_of(a) and layer_of(b) and layer_of(a) != layer_of(b)
    }
    return strongly_connected({n for e in edges for n in e}, edges)


def drawn_floors(modules: dict[str, Module]) -> list[list[str]]:
    """The floors the code itself draws, bottom first: a package sits one floor above the highest package
    it imports (module- and function-level imports alike), so every import points down. Needs no loops."""
    deps: dict[str, set[str]] = defaultdict(set)
    for a, b in runtime_edges(modules):
        src, dst = layer_of(a), layer_of(b)
        if src and dst:
            deps[src]  # a package that imports only itself still has a floor
            if src != dst:
                deps[src].add(dst)
    floor: dict[str, int] = {}

    def height(pkg: str, seen: tuple[str, ...] = ()) -> int:
        if pkg not in floor:
            if pkg in seen:
                raise ValueError(f"package loop through {pkg}: no floors can be drawn")
            floor[pkg] = 1 + max((height(d, (*seen, pkg)) for d in deps[pkg]), default=-1)
        return floor[pkg]

    for pkg in list(deps):
        height(pkg)
    out: list[list[str]] = [[] for _ in range(1 + max(floor.values(), default=-1))]
    for pkg, f in floor.items():
        out[f].append(pkg)
    return [sorted(level) for level in out]


def report(package: Path, layers_file: Path, verbose: bool) -> None:
    modules = parse_package(package)
    free = torch_free(modules)
    all_edges = runtime_edges(modules)
    module_level = runtime_edges(modules, in_function=False)
    function_only = {e for e in runtime_edges(modules, in_function=True) if e not in module_level}
    hidden = sorted(e for e in function_only if e[1] in free)
    needless = needless_lazy_imports(modules)
    circles, loops = import_circles(modules), package_loops(modules)
    arrows = package_up_arrows(modules, layers_from(layers_file))
    long_files = sorted(((m.lines, n) for n, m in modules.items() if m.lines > LONG_FILE), reverse=True)
    long_functions = sorted(
        (length, f"{n}.{f}:{line}") for n, m in modules.items() for f, line, length in m.long_functions
    )[::-1]
    print(f"modules: {len(modules)}, lines: {sum(m.lines for m in modules.values())}")
    print(f"internal import edges: {len(all_edges)}")
    print(
        f"  imported only inside function bodies: {len(function_only)}, of them to torch-free modules: {len(hidden)}"
    )
    print(f"function-level imports of what the module already loads at its top: {len(needless)}")
    print(f"torch-free modules: {len(free)}")
    print(f"import circles (module + function level): {len(circles)}")
    print(f"package-level loops: {len(loops)}")
    print(f"package-level up-arrows (module edges to a higher layer or a sibling): {len(arrows)}")
    print(f"files > {LONG_FILE} lines: {len(long_files)}")
    print(f"functions > {LONG_FUNCTION} lines: {len(long_functions)}")
    if not verbose:
        return
    sections = [
        ("import circles", [" <-> ".join(c) for c in circles]),
        ("package-level loops", [" <-> ".join(c) for c in loops]),
        ("up-arrows", [f"{a} -> {b}" for a, b in arrows]),
        ("function-level imports of torch-free modules", [f"{a} -> {b}" for a, b in hidden]),
        (
            "function-level imports of loaded modules",
            [f"{e.importer}:{e.line} -> {e.target}" for e in needless],
        ),
        ("long files", [f"{lines} {n}" for lines, n in long_files]),
        ("long functions", [f"{length} {where}" for length, where in long_functions]),
    ]
    for title, rows in sections:
        print(f"\n{title}:")
        for row in rows:
            print(f"  {row}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", type=Path, default=PACKAGE, help="the normbench package directory")
    parser.add_argument("--layers", type=Path, default=LAYERS_FILE, help="the test file holding LAYERS")
    parser.add_argument("--list", action="store_true", help="list each circle, up-arrow and long thing")
    parser.add_argument("--floors", action="store_true", help="draw the floors the imports imply, top first")
    args = parser.parse_args(argv)
    if args.floors:
        for level in reversed(drawn_floors(parse_package(args.package.resolve()))):
            print("  ".join(level))
        return 0
    report(args.package.resolve(), args.layers.resolve(), args.list)
    return 0


if __name__ == "__main__":
    sys.exit(main())
