"""Discovery of norms, benches, claims and plots: every module in normbench's own packages registers itself
on import; third-party packages add theirs through entry points (the Python convention), and
NORMBENCH_PLUGINS (comma-separated module names) adds modules for quick experiments and tests.

A plugin package declares, in its pyproject.toml,

    [project.entry-points."normbench.norms"]
    mynorm = "mypkg.mynorm"          # a module that registers with @register_norm / @impl on import

and likewise `normbench.benches` (@register_bench) and `normbench.claims` (@claim). A plugin that fails to
import is a NormbenchError naming the plugin and the error (one line, exit 2 at the CLI)."""

from __future__ import annotations

import importlib
import os
import pkgutil
from importlib.metadata import entry_points

from normbench.core.errors import NormbenchError

# Which entry-point group extends which of normbench's own packages.
GROUPS = {
    "normbench.norms": "normbench.norms",
    "normbench.benches": "normbench.benches",
    "normbench.analysis.claims": "normbench.claims",
    "normbench.analysis.plots": "normbench.plots",
}
ENV_VAR = "NORMBENCH_PLUGINS"

_loaded: set[str] = set()
# What the environment fingerprint records: {distribution or module: {name, version, registered}} of every
# plugin imported in this process.
_plugin_sources: dict[str, dict] = {}


def import_package_modules(package: str) -> None:
    """Import every non-private module of `package` once (each registers itself by decorator), then the
    plugins of its entry-point group and those named in NORMBENCH_PLUGINS."""
    if package in _loaded:
        return
    pkg = importlib.import_module(package)
    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{package}.{info.name}")
    _loaded.add(package)
    if package in GROUPS:
        load_entry_points(GROUPS[package])
    load_env_plugins()


def load_entry_points(group: str) -> None:
    for ep in entry_points(group=group):
        key = f"{group}:{ep.name}"
        if key in _loaded:
            continue
        _loaded.add(key)  # once, even when it fails: the error is reported, not retried per lookup
        try:
            ep.load()
        except Exception as exc:
            raise NormbenchError(
                f"plugin {ep.name!r} ({group} = {ep.value}, from {_dist_name(ep)}) failed to import: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        dist = getattr(ep, "dist", None)
        _record(dist.name if dist else None, dist.version if dist else None, ep.value.split(":")[0], key)


def load_env_plugins() -> None:
    for name in filter(None, (s.strip() for s in os.environ.get(ENV_VAR, "").split(","))):
        if name in _loaded:
            continue
        _loaded.add(name)
        try:
            importlib.import_module(name)
        except Exception as exc:
            raise NormbenchError(
                f"plugin {name!r} (from {ENV_VAR}) failed to import: {type(exc).__name__}: {exc}"
            ) from exc
        _record(*_owner(name), name, f"{ENV_VAR}:{name}")


def _owner(module: str) -> tuple[str | None, str | None]:
    """(distribution, version) that installed `module`, or (None, None) for a module on the path only."""
    from importlib.metadata import packages_distributions, version

    names = packages_distributions().get(module.split(".")[0]) or []
    return (names[0], version(names[0])) if names else (None, None)


def _record(dist: str | None, version: str | None, module: str, registered: str) -> None:
    entry = _plugin_sources.setdefault(dist or module, {"name": dist or module, "version": version})
    entry.setdefault("registered", []).append(registered)


def loaded_plugins() -> list[dict]:
    """{name, version, registered} of every plugin distribution (or, for a NORMBENCH_PLUGINS module that no
    distribution installed, the module with version null) imported in this process: what a run stores."""
    return [
        {**e, "registered": sorted(e["registered"])}
        for e in sorted(_plugin_sources.values(), key=lambda e: e["name"])
    ]


def installed_plugins() -> list[tuple[str, str, str, str]]:
    """(group, name, module, distribution) of every entry-point plugin installed, for `normbench list`."""
    rows = []
    for group in GROUPS.values():
        for ep in entry_points(group=group):
            rows.append((group, ep.name, ep.value, _dist_name(ep)))
    return rows


def _dist_name(ep) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "?"
