"""Test-only norms for the Ray executor tests (NORMBENCH_PLUGINS=ray_dying_norms): building `dies:once` kills
its worker process the first time (a marker file in $NB_DIE_DIR remembers it), as an OOM kill would;
`dies_unless_spared:module` kills it until $NB_DIE_DIR/spare exists;
`dies:always` kills it every time."""

from __future__ import annotations

import os
from pathlib import Path

from normbench.norms.registry import Built, Norm, impl, register_norm


def _die() -> None:
    os._exit(17)  # no exception, no cleanup: what the OOM killer or a segfault leaves behind


@register_norm
class Dies(Norm):
    name = "dies"
    description = "test only: building kills the worker process"

    @impl("once", baseline=True)
    def once(self, hidden, *, eps, dtype, device):
        """kills the process on the first attempt only"""
        marker = Path(os.environ["NB_DIE_DIR"]) / f"died-{hidden}"
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            _die()
        return Built(lambda x: x * 1.0, [])

    @impl("always")
    def always(self, hidden, *, eps, dtype, device):
        """kills the process on every attempt"""
        _die()

    def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
        return 2 * tokens * hidden * itemsize


@register_norm
class DiesUnlessSpared(Norm):
    name = "dies_unless_spared"
    description = "test only: building kills the worker process until $NB_DIE_DIR/spare exists"

    @impl("module", baseline=True)
    def module(self, hidden, *, eps, dtype, device):
        """kills the process while no `spare` file is in $NB_DIE_DIR (a fresh-process test's --resume)"""
        if not (Path(os.environ["NB_DIE_DIR"]) / "spare").exists():
            _die()
        return Built(lambda x: x * 1.0, [])

    def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
        return 2 * tokens * hidden * itemsize
