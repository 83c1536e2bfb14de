"""How close two values of a deterministic metric must be to count as the same result when they come from
different machines. The same case on one machine is bit-identical (fixed seeds, one thread, the same
kernels); another CPU may take another kernel path (AVX-512 vs AVX2 in oneDNN/MKL) and round the last bit
differently, and training then carries that difference forward step by step. The tolerance is therefore
counted in units in the last place (ulps) of the dtype the case computes in, times the steps that can
accumulate it. Torch-free: `normbench compare` and the tests both read it."""

from __future__ import annotations

from dataclasses import dataclass

# Machine epsilon (spacing at 1.0) of each dtype: 2^-52, 2^-23, 2^-7 (bf16: 8 significand bits), 2^-10.
EPS = {"fp64": 2.0**-52, "fp32": 2.0**-23, "bf16": 2.0**-7, "fp16": 2.0**-10}

# A few roundings differ per step between kernel paths (a reduction in another order: each partial sum
# rounds once); 8 ulps a step leaves room for that and is still >100x below any change of seed, init or
# data (those move a 40-step loss by 1e-3 or more relative).
ULPS_PER_STEP = 8


@dataclass(frozen=True)
class Tolerance:
    """|new - base| <= atol + rtol * max(|base|, |new|), value by value; `why` says where it comes from."""

    rtol: float = 0.0
    atol: float = 0.0
    why: str = ""

    def close(self, a: float, b: float) -> bool:
        if a == b:  # also equal infinities
            return True
        return abs(a - b) <= self.atol + self.rtol * max(abs(a), abs(b))

    def all_close(self, base: list[float], new: list[float]) -> bool:
        return len(base) == len(new) and all(self.close(a, b) for a, b in zip(base, new, strict=True))


def eps(dtype: str | None) -> float:
    return EPS.get(dtype or "fp32", EPS["fp32"])


def training_tolerance(steps: int, dtype: str = "fp32") -> Tolerance:
    """A value after `steps` optimizer steps in `dtype`: ULPS_PER_STEP ulps per step, relative."""
    n = max(1, int(steps))
    return Tolerance(
        rtol=ULPS_PER_STEP * n * eps(dtype), why=f"{ULPS_PER_STEP} {dtype} ulps x {n} steps, relative"
    )


def ulps_tolerance(ulps: float, dtype: str = "fp32", *, relative: bool = True) -> Tolerance:
    """`ulps` units of `dtype`: relative to the value, or absolute (for a metric that is already a relative
    error, such as the Jacobian's (measured - closed form) / closed form)."""
    size = ulps * eps(dtype)
    how = "relative" if relative else "absolute"
    return Tolerance(
        rtol=size if relative else 0.0, atol=0.0 if relative else size, why=f"{ulps:g} {dtype} ulps, {how}"
    )
