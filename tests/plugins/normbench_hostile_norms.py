"""Test-only norm, loaded through NORMBENCH_PLUGINS=normbench_hostile_norms: its kernel fails with a message
full of terminal escape sequences and Rich markup, as a hostile or careless plugin's could."""

from __future__ import annotations

from normbench.norms.registry import Norm, impl, register_norm

HOSTILE_MESSAGE = "\x1b[2J\x1b[31mscreen cleared [/] [bold]markup\x1b]0;title\x07"


@register_norm
class Hostile(Norm):
    name = "hostile"
    description = "test only: raises with escape sequences in its message"

    @impl("raises", baseline=True)
    def raises(self, hidden, *, eps, dtype, device):
        """building it raises a message with ESC sequences"""
        raise ValueError(HOSTILE_MESSAGE)

    def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
        return 2 * tokens * hidden * itemsize
