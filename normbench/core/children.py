"""Child processes that cannot outlive the command that started them: on Linux each child asks the kernel
for SIGKILL when its parent dies (prctl PR_SET_PDEATHSIG), so a SIGKILL of normbench (a CI job cancelled
past its grace period) leaves no worker timing on; elsewhere nothing is asked (the parent's `finally` ends
them)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent() -> Callable[[], None] | None:
    """A `preexec_fn` for subprocess.Popen that ties the child's life to this process; None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    parent = os.getpid()
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: the child only calls it

    def ask() -> None:  # runs in the child between fork and exec
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request was in place
            os._exit(1)

    return ask
