"""The norm registry. A norm is a class with implementations marked by @impl; @register_norm adds it.

    @register_norm
    class LayerNorm(Norm):
        name = "layernorm"
        @impl("module", baseline=True)
        def module(self, d, *, eps, dtype, device) -> Built: ...

Everything else a norm offers (its float64 `exact` formula, a Jacobian closed form, a fold, ...) is an attribute or
method of `Norm` with a default; see its docstring, and docs/extending.md "Adding a norm" for a complete example.

Optional third-party kernels declare `requires=("liger_kernel",)`; when that import fails the impl is
reported `unavailable` with the import error instead of failing the run.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from normbench.core.params import did_you_mean
from normbench.core.registry import Registry

NORMS: Registry[Norm] = Registry("norm", "normbench.norms")
# What latency times every case against by default (the suite's `reference`), then what a run without it
# (an older run, a suite without LayerNorm) takes its speedups against: the first of these it holds.
SPEEDUP_REFERENCES = ("layernorm:module", "rmsnorm:module")


@dataclass
class Built:
    """A ready-to-call implementation: fn(x) -> y, the tensors that receive gradients in fwd+bwd,
    and the nn.Module when there is one (for eval/train switching and introspection)."""

    fn: Callable[[Any], Any]
    params: list[Any] = field(default_factory=list)
    module: Any = None

    @classmethod
    def of(cls, module) -> Built:
        """An nn.Module as it is: called directly, its parameters the gradient tensors."""
        return cls(module, list(module.parameters()), module)


def check_output(y, x, impl: str = "the implementation") -> None:
    """The contract of every Built.fn: y = fn(x) is a tensor of x's shape, dtype and device. Checked on
    each case's first checked call (benches/_tensors.py, benches/_jacobian/subject.py), so an output of the wrong
    shape (x[:1], x.sum()) fails its case instead of being timed and stored as ok."""
    import torch

    if not isinstance(y, torch.Tensor):
        raise TypeError(f"{impl} returned {type(y).__name__}, not a tensor")
    if y.shape != x.shape or y.dtype != x.dtype or y.device != x.device:
        raise ValueError(
            f"{impl} returned a {tuple(y.shape)} {str(y.dtype).removeprefix('torch.')} tensor on {y.device}; "
            f"an implementation must return its input's shape, dtype and device "
            f"({tuple(x.shape)} {str(x.dtype).removeprefix('torch.')} on {x.device})"
        )


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
    """Base class: the protocol every norm declares. Subclasses set `name`, `description`, mark builders with
    @impl, and declare what else they offer by overriding the attributes and methods below; every one has
    a default, so a norm states only what it has. Benches read these and never probe with getattr.

    Capability                What reads it                   Default
    param_names               accuracy rows (d<name>), Jacobian () : the Built's params, in order
    gain_name                 Jacobian `gain = "random"`      "weight" when in param_names, else no gain
    exact(...)                latency accuracy, block error   None: no accuracy rows (the report says so)
    exact_grads(...)          latency accuracy in fwd+bwd     None: float64 autograd of `exact`
    eager_impl(impl)          latency accuracy (err_ratio)    "module" when it exists, else the baseline
    jacobian_closed_form(impl) jacobian bench                 None: no jacobian cases (compute=None:
                                                              measured, no closed form)
    module_impl               models, block bench             "module" when it exists, else None
    inference_impl            block bench                     module_impl
    folds_into_linear + fold_into_linear(...)  block `<norm>_folded`   False
    mixes_tokens              models (masked objective only)  False
    stateful                  latency re-check after timing   False
    bytes_moved(...)          latency GB/s                    raises: no byte model
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    impls: ClassVar[dict[str, ImplInfo]]
    # Names of Built.params, in order, for every implementation (the accuracy rows' d<name> tensors).
    param_names: ClassVar[tuple[str, ...]] = ()
    # The elementwise gain γ among param_names, shape (d,); None: the norm has none (γ = 1).
    gain_name: ClassVar[str | None] = "weight"
    # The implementation whose Built.module is an nn.Module over the last dim of (..., d), with train()/eval()
    # semantics: what a model puts in its blocks. None: no module (the norm is kept out of models and blocks).
    module_impl: ClassVar[str | None] = "module"
    # The implementation with inference semantics (running statistics where there are any) whose module the
    # block bench puts after its Linear; None = module_impl.
    inference_impl: ClassVar[str | None] = None
    # True: the statistics run over the batch (tokens of other sequences, and of later positions): illegal
    # in a causal LM, legal with the masked objective (BatchNorm, PowerNorm).
    mixes_tokens: ClassVar[bool] = False
    # True: at inference the norm is an elementwise affine map y = s ⊙ x + c, so `fold_into_linear` can
    # absorb it into a preceding Linear (the block bench's `<norm>_folded`).
    folds_into_linear: ClassVar[bool] = False
    # True: an output depends on state that each call updates (PowerNorm's running ψ in train mode), so two
    # calls on one input legitimately differ; the latency bench re-checks such an implementation after timing
    # against its float64 `exact` at the state of that call, not against its own earlier output.
    stateful: ClassVar[bool] = False
    # float64 definition of the norm: (impl, x, params, built, *, eps) -> y. None: no accuracy rows.
    exact: ClassVar[Callable[..., Any] | None] = None

    def build(self, impl_name: str, d: int, *, eps: float, dtype, device) -> Built:
        info = self.impls[impl_name]
        # d positionally: a plugin may name the width otherwise (docs/extending.md)
        return getattr(self, info.method)(d, eps=eps, dtype=dtype, device=device)

    @property
    def baseline(self) -> str:
        return next((i.name for i in self.impls.values() if i.baseline), next(iter(self.impls)))

    def eager_impl(self, impl: str) -> str:
        """The eager implementation whose float64 error an implementation is judged against (same
        semantics; BatchNorm: train or eval)."""
        return "module" if "module" in self.impls else self.baseline

    def exact_grads(self, impl: str, x, dy, params: list, built: Built, *, eps: float) -> dict | None:
        """float64 {"dx": ..., "d<param>": ...} for a norm whose backward is not the derivative of its
        forward (PowerNorm's approximate backward); None: autograd of `exact` gives them."""
        return None

    def jacobian_closed_form(self, impl: str):
        """The closed form of σ_max(J) for this implementation (a normbench.norms.closed_form.Formula; with
        compute=None when none is known: σ_max is then measured against Xiong's bounds only), or None: no
        Jacobian cases (the bench refuses them with that reason)."""
        return None

    def fold_into_linear(self, built: Built, weight, bias, *, eps: float):
        """(W', b') in float64 with x W'ᵀ + b' = norm(x Wᵀ + b) at inference; only for folds_into_linear."""
        raise NotImplementedError(f"{self.name} does not fold into a Linear")

    def bytes_moved(self, impl: str, tokens: int, d: int, itemsize: int, mode: str) -> int:
        """The byte model: the minimum bytes one call must move, each tensor read or written once.
        mode is "fwd" or "fwd+bwd"; statistics (mean, rstd) are fp32 = 4 bytes. See each norm."""
        raise NotImplementedError(f"{self.name} has no byte model")

    @property
    def block_impl(self) -> str | None:
        """What the block bench builds: inference_impl, else module_impl."""
        return self.inference_impl or self.module_impl

    def capabilities(self) -> dict[str, bool]:
        """Which capabilities this norm declares (the `list norms` column)."""
        return {
            "exact": self.exact is not None,
            "jacobian": any(self.jacobian_closed_form(i) is not None for i in self.impls),
            "module": self.module_impl is not None,
            "fold": self.folds_into_linear,
            "mixes_tokens": self.mixes_tokens,
        }


def register_norm(cls: type[Norm]) -> type[Norm]:
    cls.impls = {}
    for klass in reversed(cls.__mro__):
        for attr in vars(klass).values():
            info = getattr(attr, "_normbench_impl", None)
            if info is not None:
                cls.impls[info.name] = info
    if not cls.impls:
        raise TypeError(f"norm {cls.__name__} declares no @impl")
    _adopt_old_names(cls)
    _check_declarations(cls)
    NORMS.add(cls.name, cls())
    return cls


# Names the float64 formula had before 2026-12 (`reference` now means only the latency speedup reference):
# a plugin still defining them keeps working, with a DeprecationWarning, until 2027-06-01.
OLD_NAMES = {"reference": "exact", "reference_grads": "exact_grads"}


def _adopt_old_names(cls: type[Norm]) -> None:
    """A plugin's `reference` / `reference_grads` become its `exact` / `exact_grads`, never silently ignored."""
    for old, new in OLD_NAMES.items():
        owner = next((k for k in cls.__mro__ if old in vars(k)), None)
        if owner is None or any(new in vars(k) for k in cls.__mro__[: cls.__mro__.index(owner) + 1]):
            continue  # absent, or overridden by the new name at least as close to cls
        warnings.warn(
            f"norm {cls.__name__}: `{old}` is now called `{new}`; the old name stops working on 2027-06-01",
            DeprecationWarning,
            stacklevel=3,
        )
        setattr(cls, new, vars(owner)[old])


def _check_declarations(cls: type[Norm]) -> None:
    """Declared implementation names must exist; the inherited default "module" quietly means none when
    the norm has no such implementation (the copy probe)."""
    if cls.module_impl is not None and cls.module_impl not in cls.impls:
        if "module_impl" in vars(cls):
            raise TypeError(f"norm {cls.__name__}: module_impl {cls.module_impl!r} is not one of its @impl")
        cls.module_impl = None
    if cls.inference_impl is not None and cls.inference_impl not in cls.impls:
        raise TypeError(f"norm {cls.__name__}: inference_impl {cls.inference_impl!r} is not one of its @impl")
    if cls.gain_name is not None and cls.gain_name not in cls.param_names:
        if "gain_name" in vars(cls):
            raise TypeError(f"norm {cls.__name__}: gain_name {cls.gain_name!r} is not in param_names")
        cls.gain_name = None
    if cls.folds_into_linear and cls.fold_into_linear is Norm.fold_into_linear:
        raise TypeError(f"norm {cls.__name__} says folds_into_linear but defines no fold_into_linear")
    if cls.folds_into_linear and cls.exact is None:  # the block bench checks a fold against it
        raise TypeError(f"norm {cls.__name__} says folds_into_linear but has no float64 exact")


def all_norms() -> dict[str, Norm]:
    return NORMS.all()


def get_norm(name: str) -> Norm:
    return NORMS.get(name)


def variant_label(norm, impl) -> str:
    """How results name the norm a model ran: `norm`, or `norm:impl` when the case named an implementation
    other than the one a model gets by default (powernorm:official beside powernorm's Algorithm 1)."""
    try:
        registered = get_norm(norm)
    except (KeyError, ValueError):
        return str(norm)
    named = isinstance(impl, str) and impl in registered.impls
    return (
        f"{norm}:{impl}" if named and impl not in (registered.module_impl, registered.baseline) else str(norm)
    )


def reference_problem(label: str) -> str | None:
    """Why `label` names no registered implementation ("norm:impl"), or None: the check of a latency
    suite's `reference`."""
    norm, sep, impl = label.partition(":")
    norms = all_norms()
    if not sep or not impl:
        return f"{label!r} must be norm:impl, e.g. 'layernorm:module'"
    if norm not in norms:
        return f"{norm!r} is not a registered norm" + did_you_mean(norm, sorted(norms))
    if impl not in norms[norm].impls:
        return f"{norm} has no implementation {impl!r}" + did_you_mean(impl, sorted(norms[norm].impls))
    return None
