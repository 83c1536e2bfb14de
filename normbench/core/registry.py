"""One registry for every pluggable thing: norms, bench kinds, claims and plots.

Details: docs/architecture.md, "Four registries, one mechanism"."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

from normbench.core.params import did_you_mean
from normbench.core.plugins import check_registration, current_plugin, import_package_modules

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, what: str, package: str):
        self.what = what  # "norm", "bench kind", ...: the word in error messages
        self.package = package  # whose modules (and entry-point plugins) register entries on import
        self._entries: dict[str, T] = {}
        self._origin: dict[str, str] = {}  # name -> "normbench" or the plugin that registered it

    def add(self, name: str, entry: T) -> T:
        """Register `entry` under `name`. The same module registering it again (a reload) replaces it; a
        plugin taking a name that normbench or another plugin holds is refused unless overrides are
        allowed (core/plugins.py). A plugin that registers before normbench's own module does keeps it."""
        origin = current_plugin() or "normbench"
        if name in self._entries:
            old = self._origin.get(name, "normbench")
            check_registration(self.what, name, old, origin)
            if origin == "normbench" and old != "normbench":  # the plugin's replacement stands
                return self._entries[name]
        self._entries[name] = entry
        self._origin[name] = origin
        return entry

    def origin(self, name: str) -> str:
        """Who registered `name`: "normbench" or the plugin's description."""
        return self._origin.get(name, "normbench")

    def remove(self, name: str) -> None:
        """Forget `name` (tests register throwaway entries and take them out again)."""
        self._entries.pop(name, None)
        self._origin.pop(name, None)

    def all(self) -> dict[str, T]:
        """Every entry, after importing the package's modules and plugins (once)."""
        import_package_modules(self.package)
        return dict(self._entries)

    def get(self, name: str) -> T:
        entries = self.all()
        if name not in entries:
            raise KeyError(f"unknown {self.what} {name!r}{did_you_mean(name, list(entries))}")
        return entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self.all()

    def __iter__(self) -> Iterator[str]:
        return iter(self.all())
