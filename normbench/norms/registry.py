"""The norm registry. A norm is a class with implementations marked by @impl; @register_norm adds it.

    @register_norm
    class LayerNorm(Norm):
        name = "layernorm"
        @impl("module", baseline=True)
        def module(self, hidden, *, eps, dtype, device) -> Built: ...

Optional third-party kernels declare `requires=("liger_kernel",)`; when that import fails the impl is
reported `unavailable` with the import error instead of failing the run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from normbench.core.registry import Registry

NORMS: Registry[Norm] = Registry("norm", "normbench.norms")


@dataclass
class Built:
    """A ready-to-call implementation: fn(x) -> y, the tensors that receive gradients in fwd+bwd,
    and the nn.Module when there is one (for eval/train switching and introspection)."""

    fn: Callable[[Any], Any]
    params: list[Any] = field(default_factory=list)
    module: Any = None


@dataclass(frozen=True)
class ImplInfo:
    name: str
    method: str
    baseline: bool = False
    requires: tuple[str, ...] = ()
    description: str = ""
    # False: expanded only when a suite names it (norm:impl or impls = [...]); for implementations that
    # cost seconds to set up (torch.compile) or need optional packages, so `norms = ["layernorm"]` stays cheap.
    default: bool = True

    def missing_requirement(self) -> str | None:
        """The import error of an optional dependency, or None when everything imports."""
        for module in self.requires:
            try:
                importlib.import_module(module)
            except Exception as exc:  # ImportError, or a broken install raising anything else
                return f"{module} not importable: {type(exc).__name__}: {exc}"
        return None


def impl(
    name: str,
    *,
    baseline: bool = False,
    requires: tuple[str, ...] = (),
    description: str = "",
    default: bool = True,
):
    """Mark a Norm method as the builder of implementation `name` (default=False: only when named)."""

    def mark(fn):
        fn._normbench_impl = ImplInfo(
            name, fn.__name__, baseline, tuple(requires), description or (fn.__doc__ or "").strip(), default
        )
        return fn

    return mark


class Norm:
    """Base class. Subclasses set `name`, `description` and mark builders with @impl."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    impls: ClassVar[dict[str, ImplInfo]]

    def build(self, impl_name: str, hidden: int, *, eps: float, dtype, device) -> Built:
        info = self.impls[impl_name]
        return getattr(self, info.method)(hidden, eps=eps, dtype=dtype, device=device)

    @property
    def baseline(self) -> str:
        return next((i.name for i in self.impls.values() if i.baseline), next(iter(self.impls)))

    def bytes_moved(self, impl: str, tokens: int, hidden: int, itemsize: int, mode: str) -> int:
        """The byte model: the minimum bytes one call must move, each tensor read or written once.
        mode is "fwd" or "fwd+bwd"; statistics (mean, rstd) are fp32 = 4 bytes. See each norm."""
        raise NotImplementedError(f"{self.name} has no byte model")


def register_norm(cls: type[Norm]) -> type[Norm]:
    cls.impls = {}
    for klass in reversed(cls.__mro__):
        for attr in vars(klass).values():
            info = getattr(attr, "_normbench_impl", None)
            if info is not None:
                cls.impls[info.name] = info
    if not cls.impls:
        raise TypeError(f"norm {cls.__name__} declares no @impl")
    NORMS.add(cls.name, cls())
    return cls


def all_norms() -> dict[str, Norm]:
    return NORMS.all()


def get_norm(name: str) -> Norm:
    return NORMS.get(name)
