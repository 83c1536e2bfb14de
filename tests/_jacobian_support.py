"""Shared by the test_jacobian_* files: run their tiny torch ops on one thread."""

import pytest
import torch


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny ops on a shared 2-core machine: one thread avoids intra-op contention stalls (a jvp of a
    4x16384 LayerNorm takes 2 ms on one thread and over 100 ms on two busy ones)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
