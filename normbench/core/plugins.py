"""Discovery of norms, benches, claims and plots: every module in normbench's own packages registers itself
on import; third-party packages add theirs through entry points (the Python convention), and
NORMBENCH_PLUGINS (comma-separated module names) adds modules for quick experiments and tests.

Details: docs/extending.md, "Publishing a plugin"."""

from __future__ import annotations

import contextlib
import functools
import importlib
import pkgutil
import sys
from importlib.metadata import entry_points, packages_distributions, version

from normbench.core.errors import NormbenchError
from normbench.core.settings import env_setting

# Which entry-point group extends which of normbench's own packages.
GROUPS = {
    "normbench.norms": "normbench.norms",
    "normbench.benches": "normbench.benches",
    "normbench.analysis.claims": "normbench.claims",
    "normbench.analysis.plots": "normbench.plots",
}
ENV_VAR = "NORMBENCH_PLUGINS"
ALLOW_OVERRIDE_VAR = "NORMBENCH_ALLOW_OVERRIDE"

_loaded: set[str] = set()
# What the environment fingerprint records: {distribution or module: {name, version, registered}} of every
# plugin imported in this process.
_plugin_sources: dict[str, dict] = {}
_importing: list[str] = []  # the plugin being imported now (innermost last), e.g. "mypkg.norm (entry point)"
OVERRIDES: list[str] = []  # "norm 'layernorm': normbench replaced by plugin mypkg (NORMBENCH_PLUGINS)", ...


def current_plugin() -> str | None:
    """Which plugin is being imported now (what registers an entry then is that plugin's), or None."""
    return _importing[-1] if _importing else None


def overrides_allowed() -> bool:
    return (env_setting(ALLOW_OVERRIDE_VAR) or "0") != "0"  # empty or blank: unset


def check_registration(what: str, name: str, old: str, new: str) -> None:
    """A name registered by `old` ('normbench' or a plugin) is registered again by `new`: refused when a
    plugin is involved, unless overrides are allowed (then recorded in OVERRIDES)."""
    if old == new or (old == "normbench" and new == "normbench"):
        return  # a module re-registering its own entry (a reload)
    plugin, holder = (old, new) if new == "normbench" else (new, old)
    if not overrides_allowed():
        raise NormbenchError(
            f"{plugin} registers {what} {name!r}, a name {holder} registers: refused, so that results "
            f"under that name stay {holder}'s; rename it, or allow the replacement with `normbench run "
            f"--allow-override` ({ALLOW_OVERRIDE_VAR}=1), which the run records in its manifest"
        )
    note = f"{what} {name!r}: {holder}'s replaced by {plugin}"
    if note not in OVERRIDES:
        OVERRIDES.append(note)


@contextlib.contextmanager
def _importing_plugin(description: str, module: str):
    """While a plugin imports: it is the current plugin, and sys.argv is only its module name."""
    argv = sys.argv
    _importing.append(description)
    sys.argv = [module]
    try:
        yield
    finally:
        sys.argv = argv
        _importing.pop()


def _import_failure(what: str, exc: BaseException) -> NormbenchError:
    if isinstance(exc, SystemExit):
        return NormbenchError(f"{what} called sys.exit({exc.code!r}) while importing; nothing was run")
    return NormbenchError(f"{what} failed to import: {type(exc).__name__}: {exc}")


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


def _import_plugin(what: str, module: str, load) -> None:
    """Run `load` as plugin `what` (module `module`): any failure, SystemExit included, is one error."""
    try:
        with _importing_plugin(what, module):
            load()
    except (NormbenchError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # SystemExit too: a plugin's exit is not normbench's
        raise _import_failure(what, exc) from exc


def load_entry_points(group: str) -> None:
    for ep in entry_points(group=group):
        key = f"{group}:{ep.name}"
        if key in _loaded:
            continue
        _loaded.add(key)  # once, even when it fails: the error is reported, not retried per lookup
        what = f"plugin {ep.name!r} ({group} = {ep.value}, from {_dist_name(ep)})"
        _import_plugin(what, ep.value.partition(":")[0], ep.load)
        dist = getattr(ep, "dist", None)
        _record(dist.name if dist else None, dist.version if dist else None, ep.value.split(":")[0], key)


def load_env_plugins() -> None:
    for name in filter(None, (s.strip() for s in (env_setting(ENV_VAR) or "").split(","))):
        if name in _loaded:
            continue
        _loaded.add(name)
        _import_plugin(
            f"plugin {name!r} (from {ENV_VAR})", name, functools.partial(importlib.import_module, name)
        )
        _record(*_owner(name), name, f"{ENV_VAR}:{name}")


def _owner(module: str) -> tuple[str | None, str | None]:
    """(distribution, version) that installed `module`, or (None, None) for a module on the path only."""
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
