"""Test-only norms, loaded through NORMBENCH_PLUGINS=normbench_test_norms (with tests/plugins on
PYTHONPATH): implementations that fail in the two ways a real kernel does, to test failure rows."""

from __future__ import annotations

from normbench.norms.registry import Built, Norm, impl, register_norm

RAISE_MESSAGE = "deliberately broken kernel for the failure-row test"


@register_norm
class Broken(Norm):
    name = "broken"
    description = "test only: one implementation raises, one returns NaN"

    @impl("raises", baseline=True)
    def raises(self, hidden, *, eps, dtype, device):
        """building it raises, as a kernel with a bad launch configuration does"""
        raise ValueError(RAISE_MESSAGE)

    @impl("nan")
    def nan(self, hidden, *, eps, dtype, device):
        """returns NaN everywhere, as a kernel with an uninitialised buffer can"""
        return Built(lambda x: x * float("nan"), [])

    def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
        return 2 * tokens * hidden * itemsize
