"""Discovery of norms and benches: every module in normbench/norms and normbench/benches registers
itself on import; NORMBENCH_PLUGINS (comma-separated module names) adds out-of-tree ones, which is how
tests register deliberately broken or slowed implementations for a subprocess run."""

from __future__ import annotations

import importlib
import os
import pkgutil

_loaded: set[str] = set()


def import_package_modules(package: str) -> None:
    """Import every non-private module of `package` once (each registers itself by decorator)."""
    if package in _loaded:
        return
    pkg = importlib.import_module(package)
    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{package}.{info.name}")
    _loaded.add(package)
    load_plugins()


def load_plugins() -> None:
    for name in filter(None, (s.strip() for s in os.environ.get("NORMBENCH_PLUGINS", "").split(","))):
        if name not in _loaded:
            importlib.import_module(name)
            _loaded.add(name)
