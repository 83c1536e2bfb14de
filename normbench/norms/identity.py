"""The copy probe: y = x.clone(). Not a norm, but the bandwidth ceiling every norm is measured against
in the same run (same tensor, device and cache state), and a harmless subject for harness tests."""

from __future__ import annotations

from normbench.norms.registry import Built, Norm, impl, register_norm


@register_norm
class Identity(Norm):
    name = "identity"
    description = "copy probe: y = x.clone(); the measured bandwidth ceiling"
    param_names = ()

    @impl("copy", baseline=True)
    def copy(self, d, *, eps, dtype, device):
        """x.clone(): one read, one write (backward copies dy to dx)"""
        return Built(lambda x: x.clone(), [])

    def exact(self, impl, x, params, built, *, eps):
        return x * 1.0  # a copy, as a float64 tensor that autograd can differentiate

    def bytes_moved(self, impl, tokens, d, itemsize, mode):
        act = tokens * d * itemsize
        return 2 * act if mode == "fwd" else 4 * act  # read x, write y; backward: read dy, write dx
