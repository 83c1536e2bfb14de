"""Normalization layers, one small file each, registered with @register_norm.

Importing this package is cheap; `all_norms()` imports the norm files (and torch)."""

from normbench.norms.registry import (
    SPEEDUP_REFERENCES,
    Built,
    Norm,
    all_norms,
    get_norm,
    impl,
    reference_problem,
    register_norm,
    variant_label,
)

__all__ = [
    "SPEEDUP_REFERENCES",
    "Built",
    "Norm",
    "all_norms",
    "get_norm",
    "impl",
    "reference_problem",
    "register_norm",
    "variant_label",
]
