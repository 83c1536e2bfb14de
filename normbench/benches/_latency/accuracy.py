"""Accuracy as numbers: an implementation's outputs (and, in fwd+bwd, every gradient) against a float64
reference of the same norm on the same input and parameters, and against PyTorch's own eager error.

Details: docs/methodology.md, "Accuracy against float64"."""

from __future__ import annotations

from dataclasses import dataclass

from normbench.norms.inputs import perturb_params
from normbench.timing.process import tensor_bytes

SUSPECT_RATIO = 2.0
REL_FLOOR = 1e-3
MEMO_BYTES = 256 * 2**20
_MEMO_KEY = "latency-exact"


@dataclass
class Comparison:
    """The errors of one implementation, per tensor name."""

    outputs: dict  # name -> tensor in the implementation's dtype (kept for the re-check after timing)
    err_abs: dict
    err_rel: dict
    floor: dict  # the ratio's floor: a quarter of the dtype's spacing at max |ref|


def param_names(norm, built) -> list[str]:
    names = list(norm.param_names)
    return names + [f"p{i}" for i in range(len(names), len(built.params))]


def run_outputs(norm, built, x, dy, mode: str) -> dict:
    """y, and in fwd+bwd dx and the parameter gradients, of one call on x (under inference_mode for fwd,
    as the timed call runs)."""
    import torch

    if mode == "fwd":
        with torch.inference_mode():
            return {"y": built.fn(x).detach().clone()}
    xg = x.detach().clone().requires_grad_(True)
    for t in built.params:
        t.grad = None
    y = built.fn(xg)
    y.backward(dy)
    out = {"y": y.detach().clone(), "dx": xg.grad.detach().clone()}
    for name, t in zip(param_names(norm, built), built.params, strict=True):
        if t.grad is not None:
            out["d" + name] = t.grad.detach().clone()
        t.grad = None
    return out


def exact_outputs(norm, impl: str, built, x, dy, mode: str, eps: float) -> dict:
    """The same tensors from norm.exact in float64 (gradients by float64 autograd of the formula, or the
    norm's own `exact_grads` where its backward is not that derivative)."""
    import torch

    grad = mode != "fwd"
    if grad:
        p64 = [t.detach().double() for t in built.params]
        given = norm.exact_grads(impl, x.detach().double(), dy.double(), p64, built, eps=eps)
        if given is not None:
            return {"y": norm.exact(impl, x.detach().double(), p64, built, eps=eps).detach(), **given}
    with torch.enable_grad():
        x64 = x.detach().double().requires_grad_(grad)
        p64 = [t.detach().double().requires_grad_(grad) for t in built.params]
        y = norm.exact(impl, x64, p64, built, eps=eps)
        out = {"y": y.detach()}
        if grad:
            grads = torch.autograd.grad(y, [x64, *p64], dy.double(), allow_unused=True)
            out["dx"] = grads[0]
            for name, g in zip(param_names(norm, built), grads[1:], strict=True):
                if g is not None:
                    out["d" + name] = g
    return out


def compare(got: dict, ref: dict) -> Comparison:
    """Errors of got against ref per tensor. In-place arithmetic on one float64 copy: each pass over a
    large tensor costs memory bandwidth, and this runs for every latency case."""
    import torch

    err_abs, err_rel, floor = {}, {}, {}
    for name, r in ref.items():
        if name not in got:
            continue
        diff = got[name].double().sub_(r).abs_()
        ref_abs = r.abs()
        scale = float(ref_abs.max()) if r.numel() else 0.0
        err_abs[name] = float(diff.max()) if diff.numel() else 0.0
        small = ref_abs < REL_FLOOR * scale  # relative error is meaningless near zero
        if scale > 0 and not bool(small.all()):
            err_rel[name] = float(diff.div_(ref_abs).masked_fill_(small, 0.0).max())
        else:
            err_rel[name] = 0.0
        floor[name] = torch.finfo(got[name].dtype).eps * (scale if scale > 0 else 1.0) / 4
    return Comparison(got, err_abs, err_rel, floor)


def accuracy_rows(impl_cmp: Comparison, eager_cmp: Comparison, eager_impl: str) -> list[dict]:
    """Rows per tensor (label column `tensor`), then the worst ratio and the suspect flag."""
    rows, worst = [], 0.0
    for name, err in impl_cmp.err_abs.items():
        eager_err = eager_cmp.err_abs.get(name, float("nan"))
        ratio = err / max(eager_err, impl_cmp.floor[name])
        worst = max(worst, ratio)
        rows += [
            {"metric": "err_abs", "unit": "abs", "value": err, "tensor": name},
            {"metric": "err_rel", "unit": "rel", "value": impl_cmp.err_rel[name], "tensor": name},
            {
                "metric": "eager_err_abs",
                "unit": "abs",
                "value": eager_err,
                "tensor": name,
                "eager": eager_impl,
            },
            {"metric": "err_ratio", "unit": "ratio", "value": ratio, "tensor": name, "eager": eager_impl},
        ]
    rows += [
        {"metric": "err_ratio_max", "unit": "ratio", "value": worst, "eager": eager_impl},
        {"metric": "accuracy_suspect", "unit": "bool", "value": float(worst > SUSPECT_RATIO)},
    ]
    return rows


def recheck(before: Comparison, after: dict) -> float:
    """After the timing loop, the implementation must give what it gave before, within its own error
    against float64 (or one spacing of the dtype at the largest value): a kernel that corrupts its output under repetition fails the case.
    Returns the largest change."""
    worst = 0.0
    for name, old in before.outputs.items():
        change = float((after[name].double() - old.double()).abs().max())
        allowed = max(before.err_abs.get(name, 0.0), 4 * before.floor.get(name, 0.0))
        if change > allowed:
            raise RuntimeError(
                f"{name} changed by {change:.3g} after the timing loop (allowed {allowed:.3g})"
            )
        worst = max(worst, change)
    return worst


def measure_accuracy(norm, impl: str, built, x, p: dict, memo: dict | None = None):
    """(the implementation's Comparison, accuracy rows, (input, upstream gradient)) on the first
    `accuracy_rows` rows of the case's input; None for a norm without a float64 reference. The reference
    and the eager comparison come from `memo` when an earlier case computed them for the same key."""
    import torch

    if norm.exact is None:
        return None
    xa = x[: min(p["tokens"], p["accuracy_rows"])]
    g = torch.Generator(device=p["device"]).manual_seed(p["seed"] + 1)
    dya = torch.randn(xa.shape, device=p["device"], generator=g).to(x.dtype)
    eager_name = eager_impl_of(norm, impl)
    key = exact_key(norm, eager_name, built, xa, p)
    cache = memo.setdefault(_MEMO_KEY, {}) if memo is not None else {}
    if key not in cache:
        remember(cache, key, [exact_outputs(norm, impl, built, xa, dya, p["mode"], p["eps"]), None])
    entry = cache[key]  # [float64 reference, the eager implementation's errors (None until known)]
    impl_cmp = compare(run_outputs(norm, built, xa, dya, p["mode"]), entry[0])
    if entry[1] is None:
        if eager_name == impl:
            entry[1] = impl_cmp
        else:
            eager = norm.build(eager_name, p["d"], eps=p["eps"], dtype=x.dtype, device=p["device"])
            _perturb(eager, p["seed"])
            entry[1] = compare(run_outputs(norm, eager, xa, dya, p["mode"]), entry[0])
        entry[1] = Comparison({}, entry[1].err_abs, entry[1].err_rel, entry[1].floor)  # errors only
    eager_cmp = entry[1]
    rows = accuracy_rows(impl_cmp, eager_cmp, eager_name)
    rows.append({"metric": "accuracy_rows", "unit": "rows", "value": float(xa.shape[0])})
    return impl_cmp, rows, (xa, dya)


def eager_impl_of(norm, impl: str) -> str:
    """The eager implementation whose error an implementation is judged against."""
    return norm.eager_impl(impl)


def recheck_stateful(norm, impl: str, built, before: Comparison, xa, dya, p: dict) -> float:
    """After timing, for a norm whose output moves with its state (`Norm.stateful`): one more call against
    the float64 reference at the state that call starts from. Its errors must stay within twice those
    before timing (or 4 quarter-spacings); returns the largest error."""
    fresh = exact_outputs(norm, impl, built, xa, dya, p["mode"], p["eps"])  # before the call moves it
    after = compare(run_outputs(norm, built, xa, dya, p["mode"]), fresh)
    worst = 0.0
    for name, err in after.err_abs.items():
        allowed = max(2 * before.err_abs.get(name, 0.0), 4 * before.floor.get(name, 0.0))
        if err > allowed:
            raise RuntimeError(
                f"{name} is {err:.3g} from its float64 reference after the timing loop "
                f"(allowed {allowed:.3g})"
            )
        worst = max(worst, err)
    return worst


def exact_key(norm, eager_name: str, built, xa, p: dict) -> tuple:
    """What the float64 reference depends on. The parameter and buffer values enter as a checksum, so an
    implementation whose parameters differ (another init) never reuses another's reference."""
    import torch

    tensors = list(built.params)
    if built.module is not None and hasattr(built.module, "buffers"):
        tensors += [b for b in built.module.buffers() if b.is_floating_point()]
    with torch.no_grad():
        checksum = tuple((float(t.double().sum()), float(t.double().square().sum())) for t in tensors)
    return (
        norm.name,
        eager_name,
        tuple(xa.shape),
        str(xa.dtype),
        str(xa.device),
        p["seed"],
        p["input"],
        p["eps"],
        p["mode"],
        checksum,
    )


def remember(cache: dict, key, value) -> None:
    """Store value under key, dropping the oldest entries while the memo holds more than MEMO_BYTES."""
    cache[key] = value
    while len(cache) > 1 and tensor_bytes(*(v[0] for v in cache.values())) > MEMO_BYTES:
        del cache[next(iter(cache))]


def memo_bytes(memo: dict) -> int:
    """Bytes of the float64 references the run's memo keeps alive."""
    return tensor_bytes(*(v[0] for v in memo.get(_MEMO_KEY, {}).values()))


def _perturb(built, seed: int) -> None:
    perturb_params(built, seed)
