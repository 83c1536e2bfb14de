"""One registry for every pluggable thing: norms, bench kinds, claims and plots.

    NORMS = Registry("norm", "normbench.norms")
    NORMS.add("layernorm", LayerNorm())      # done by @register_norm when norms/layernorm.py is imported
    NORMS.get("layrnorm")                    # KeyError: unknown norm 'layrnorm' (did you mean 'layernorm'?)
    NORMS.all()                              # imports every module of normbench.norms and the plugins first

Discovery is lazy: nothing is imported until something asks for the entries, so `normbench --help` and
suite validation of other kinds stay fast. The package name is a string, not an import, so the registry
(ground floor) never points up at the layers that fill it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

from normbench.core.params import did_you_mean

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, what: str, package: str):
        self.what = what  # "norm", "bench kind", ...: the word in error messages
        self.package = package  # whose modules (and entry-point plugins) register entries on import
        self._entries: dict[str, T] = {}

    def add(self, name: str, entry: T) -> T:
        """Register (or replace: reloading a plugin module re-registers it) `entry` under `name`."""
        self._entries[name] = entry
        return entry

    def remove(self, name: str) -> None:
        """Forget `name` (tests register throwaway entries and take them out again)."""
        self._entries.pop(name, None)

    def all(self) -> dict[str, T]:
        """Every entry, after importing the package's modules and plugins (once)."""
        from normbench.core.plugins import import_package_modules

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
