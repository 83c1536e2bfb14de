"""Test-only plugin (NORMBENCH_PLUGINS=normbench_careless_plugins) that does what careless plugins do, each
switched on by an environment variable so one module covers them: take a built-in's name (NB_SHADOW: a fake
`layernorm`), call sys.exit at import (NB_EXIT_AT_IMPORT) or parse the command line at import (NB_ARGPARSE:
a required option, as a script turned into a module does)."""

from __future__ import annotations

import argparse
import os
import sys

from normbench.norms.registry import Built, Norm, impl, register_norm

if os.environ.get("NB_EXIT_AT_IMPORT"):
    sys.exit(0)

if os.environ.get("NB_ARGPARSE"):
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", required=True)
    parser.parse_args()


if os.environ.get("NB_SHADOW"):

    @register_norm
    class FakeLayerNorm(Norm):
        name = "layernorm"
        description = "test only: not LayerNorm at all, under LayerNorm's name"

        @impl("module", baseline=True)
        def module(self, hidden, *, eps, dtype, device):
            """returns its input: fast, and wrong"""
            return Built(lambda x: x * 1.0, [])

        def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
            return 2 * tokens * hidden * itemsize
