"""The base side of an A/B in this process: a commit's norm implementations (and the plugins the working
tree's run loads) imported beside the working tree's, under another module name, so that impl@base and
impl@head are timed by the same harness, on the same tensors, in the same rounds.

Details: docs/ci.md, "normbench ab"."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from normbench.core.errors import NormbenchError
from normbench.norms import all_norms

ALIAS = "normbench_ab_base"


class ABUnsupported(NormbenchError):
    """The base commit cannot be loaded beside the working tree in one process."""


def git(*args: str, cwd: Path) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise NormbenchError("normbench ab needs git on the PATH") from exc
    if done.returncode:
        raise NormbenchError(f"git {' '.join(args)}: {done.stderr.strip() or 'failed'}")
    return done.stdout.strip()


def repo_root(cwd: Path) -> Path:
    try:
        return Path(git("rev-parse", "--show-toplevel", cwd=cwd))
    except NormbenchError as exc:
        raise NormbenchError(f"normbench ab runs in a git checkout: {cwd} is not in one") from exc


@contextmanager
def base_worktree(root: Path, base: str):
    """A detached worktree of `base` (commit, branch or tag) in a temporary folder, removed afterwards."""
    commit = git("rev-parse", "--verify", "--quiet", f"{base}^{{commit}}", cwd=root)
    where = Path(tempfile.mkdtemp(prefix="normbench-ab-"))
    tree = where / "base"
    try:  # a signal while git adds it: removed all the same
        git("worktree", "add", "--detach", "--quiet", str(tree), commit, cwd=root)
        yield commit, tree
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=root, capture_output=True)
        shutil.rmtree(where, ignore_errors=True)


class _RewritingLoader(importlib.machinery.SourceFileLoader):
    """Loads a base-side file with its package names mapped to their aliases."""

    def __init__(self, fullname: str, path: str, renames: dict[str, str]):
        super().__init__(fullname, path)
        self.renames = renames

    def get_data(self, path):
        data = super().get_data(path)
        if not str(path).endswith(".py"):
            return data
        text = data.decode("utf-8")
        for old, new in self.renames.items():
            text = re.sub(rf"(?<![\w.]){re.escape(old)}(?=[.\s,)\"']|$)", new, text, flags=re.M)
        return text.encode("utf-8")

    def path_stats(self, path):  # no bytecode cache for rewritten sources
        raise OSError


class _BaseFinder(importlib.abc.MetaPathFinder):
    """Finds `normbench_ab_base.<top>...` modules in the base worktree's folders."""

    def __init__(self, folders: dict[str, Path], renames: dict[str, str]):
        self.folders = folders  # alias prefix -> folder (a package) or .py file (a module)
        self.renames = renames

    def find_spec(self, fullname, path=None, target=None):
        if fullname == ALIAS or fullname == f"{ALIAS}.plugins":
            spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            spec.submodule_search_locations = []
            return spec
        for prefix, where in self.folders.items():
            if fullname != prefix and not fullname.startswith(prefix + "."):
                continue
            rest = fullname[len(prefix) :].lstrip(".").split(".") if fullname != prefix else []
            target_path = where.joinpath(*rest) if rest else where
            if target_path.is_dir() or (not rest and where.is_dir()):
                init = target_path / "__init__.py"
                loader = _RewritingLoader(fullname, str(init), self.renames)
                return importlib.util.spec_from_file_location(
                    fullname, init, loader=loader, submodule_search_locations=[str(target_path)]
                )
            file = target_path.with_suffix(".py") if rest else where
            if file.is_file():
                loader = _RewritingLoader(fullname, str(file), self.renames)
                return importlib.util.spec_from_file_location(fullname, file, loader=loader)
        return None


def _plugin_paths(root: Path, tree: Path) -> dict[str, tuple[Path, bool]]:
    """NORMBENCH_PLUGINS modules that live in the repository: name -> (its path in the base worktree,
    whether it is a package). Those outside the repository are the same file on both sides."""
    out = {}
    for name in filter(None, (s.strip() for s in os.environ.get("NORMBENCH_PLUGINS", "").split(","))):
        top = name.split(".")[0]
        spec = importlib.util.find_spec(top)
        if spec is None or spec.origin is None:
            continue
        origin = Path(spec.origin).resolve()
        is_package = spec.submodule_search_locations is not None
        path = origin.parent if is_package else origin
        try:
            rel = path.relative_to(root.resolve())
        except ValueError:
            rel = None
        out[top] = ((tree / rel) if rel is not None else path, is_package)
    return out


def check_head(root: Path) -> None:
    """In a checkout of normbench itself, head is this checkout's code: the normbench this process runs
    must be the one in the working tree (an editable install of it), or head would be another copy."""
    running = Path(__file__).resolve().parents[2]  # normbench/ab/sides.py -> the folder holding normbench
    if (root / "normbench" / "norms" / "registry.py").is_file() and running != root.resolve():
        raise NormbenchError(
            f"this checkout ({root}) is normbench, but the normbench running is {running}: install the "
            "checkout (pip install -e .) or run with PYTHONPATH set to it, so that head is the working tree"
        )


def check_base(root: Path, tree: Path, base: str) -> None:
    """In normbench's own checkout the base must hold normbench: a commit without it would leave the
    installed (head's) norms on both sides, and head against itself always passes."""
    if (root / "normbench" / "norms" / "registry.py").is_file() and not (
        tree / "normbench" / "norms" / "registry.py"
    ).is_file():
        raise NormbenchError(
            f"base {base}: this checkout is normbench, but the commit holds no normbench/norms/registry.py; "
            "nothing to time head against (give a commit of normbench)"
        )


def load_base_norms(root: Path, tree: Path):
    """Import the base worktree's norms (and the repository's plugins at base) under ALIAS; returns the base
    side's `get_norm`. Raises ABUnsupported with the reason when the base cannot load beside head."""
    norms_dir = tree / "normbench" / "norms"
    if not (tree / "normbench").is_dir():  # a plugin's repository: normbench's norms are the installed ones
        norms_dir = Path(importlib.util.find_spec("normbench.norms").origin).parent
    if not (norms_dir / "registry.py").is_file():
        raise ABUnsupported(f"the base has no normbench/norms/registry.py under {tree}")
    renames = {"normbench.norms": f"{ALIAS}.norms"}
    folders: dict[str, Path] = {f"{ALIAS}.norms": norms_dir}
    plugins = _plugin_paths(root, tree)
    for top, (path, _) in plugins.items():
        renames[top] = f"{ALIAS}.plugins.{top}"
        folders[f"{ALIAS}.plugins.{top}"] = path
    finder = _BaseFinder(folders, renames)
    sys.meta_path.insert(0, finder)
    try:
        registry = importlib.import_module(f"{ALIAS}.norms.registry")
        for top in plugins:
            importlib.import_module(f"{ALIAS}.plugins.{top}")
        registry.all_norms()  # the base's own modules register in the base's own registry
    except NormbenchError:
        raise
    except Exception as exc:
        raise ABUnsupported(
            f"the base's norms do not load beside this tree: {type(exc).__name__}: {exc}"
        ) from exc
    return registry.get_norm


def _files(folder: Path) -> dict[str, bytes]:
    if folder.is_file():
        return {folder.name: folder.read_bytes()}
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.py"))}


def changed_norms(root: Path, tree: Path) -> set[str] | None:
    """The norms whose code differs between head and the base worktree: set() when every file of the norms
    package (and of the repository's plugins) is byte-identical, the names registered by the changed norm
    modules when only those differ, None (every norm) when a shared file differs (one that registers no norm:
    the registry, the inputs, a private helper; or a plugin)."""
    head_dir = Path(importlib.util.find_spec("normbench.norms").origin).parent
    base_dir = tree / "normbench" / "norms" if (tree / "normbench").is_dir() else head_dir
    head, base = _files(head_dir), _files(base_dir)
    changed = {name for name in head.keys() | base.keys() if head.get(name) != base.get(name)}
    for top, (path, _) in _plugin_paths(root, tree).items():
        spec = importlib.util.find_spec(top)
        mine = Path(spec.origin).parent if spec.submodule_search_locations is not None else Path(spec.origin)
        if _files(mine) != (_files(path) if path.exists() else {}):
            return None
    if not changed:
        return set()
    if any(name.startswith("_") or "/" in name for name in changed):
        return None
    by_module: dict[str, set[str]] = {}
    for n in all_norms().values():
        by_module.setdefault(type(n).__module__, set()).add(n.name)
    out: set[str] = set()
    for name in changed:
        registered = by_module.get(f"normbench.norms.{name[:-3]}")
        if registered:
            out |= registered
        elif name in head:  # a file at head that registers no norm: shared (registry.py, inputs.py, ...)
            return None
        else:  # removed at head: the norm it registered at base, by its file's name
            out.add(name[:-3])
    return out
