"""The byte model of every norm and mode equals an independent count of each tensor read and written once,
and the bench's GB/s is that count over the median time."""

from __future__ import annotations

import pytest
from latency_helpers import run

from normbench.norms import get_norm

T, H, S = 48, 40, 2  # tokens, hidden, itemsize (bf16)

# Each tensor one call reads or writes, once: A = an activation (T x H), P = a parameter or running
# statistic vector (H), R = an fp32 per-row statistic (T x 4 bytes), C = an fp32 per-channel statistic
# (H x 4 bytes), s = a scalar parameter.
TRAFFIC = {
    ("layernorm", "fwd"): "read x, write y: A A; read gamma, beta: P P",
    (
        "layernorm",
        "fwd+bwd",
    ): "fwd: A A P P, write mean rstd: R R; bwd: read dy x: A A, gamma: P, mean rstd: R R, "
    "write dx: A, dgamma dbeta: P P",
    ("rmsnorm", "fwd"): "A A; gamma: P",
    (
        "rmsnorm",
        "fwd+bwd",
    ): "fwd: A A P, write rstd: R; bwd: read dy x: A A, gamma: P, rstd: R, write dx: A, dgamma: P",
    ("batchnorm:eval", "fwd"): "A A; gamma beta running mean var: P P P P",
    (
        "batchnorm:eval",
        "fwd+bwd",
    ): "fwd: A A P P P P; bwd: read dy x: A A, gamma mean var: P P P, write dx: A, dgamma dbeta: P P",
    ("batchnorm:train", "fwd"): "A A; gamma beta: P P; running mean var read and written: P P P P",
    (
        "batchnorm:train",
        "fwd+bwd",
    ): "fwd: A A P P P P P P, save mean invstd: C C; bwd: read dy x: A A, gamma: P, "
    "saved: C C, write dx: A, dgamma dbeta: P P",
    ("dyt", "fwd"): "A A; gamma beta: P P; alpha: s",
    (
        "dyt",
        "fwd+bwd",
    ): "fwd: A A P P s; bwd: read dy x: A A, gamma alpha: P s, write dx: A, dgamma dbeta dalpha: P P s",
    ("identity", "fwd"): "A A",
    ("identity", "fwd+bwd"): "A A; bwd: read dy, write dx: A A",
}
SIZE = {"A": T * H * S, "P": H * S, "R": T * 4, "C": H * 4, "s": S}


def count(traffic: str) -> int:
    return sum(SIZE[tok] for tok in traffic.replace(",", " ").replace(";", " ").split() if tok in SIZE)


@pytest.mark.parametrize("key, mode", list(TRAFFIC))
def test_byte_model_counts_every_tensor_once(key, mode):
    name, _, which = key.partition(":")
    norm = get_norm(name)
    impls = [i for i in norm.impls if not which or i.startswith(which)]
    for impl in impls:  # every implementation of a norm moves the same minimum bytes
        assert norm.bytes_moved(impl, T, H, S, mode) == count(TRAFFIC[key, mode]), f"{name}:{impl} {mode}"


def test_every_norm_has_a_byte_model_for_both_modes():
    for name in ("layernorm", "rmsnorm", "batchnorm", "dyt", "identity"):
        norm = get_norm(name)
        for impl in norm.impls:
            for mode in ("fwd", "fwd+bwd"):
                assert norm.bytes_moved(impl, T, H, S, mode) > 0, f"{name}:{impl} {mode}"


@pytest.mark.parametrize("stat", ["median", "min"])
def test_bench_gbps_is_bytes_over_the_chosen_statistic(stat):
    m, _, status, error = run(
        "latency", "rmsnorm", "module", tokens=T, d=H, dtype="bf16", mode="fwd+bwd", stat=stat
    )
    assert status == "ok", error
    assert m["bytes"] == count(TRAFFIC["rmsnorm", "fwd+bwd"])
    assert m["gbps"] == pytest.approx(m["bytes"] / m[f"time_{stat}"] / 1e9)
    assert m["copy_gbps"] == pytest.approx(
        count(TRAFFIC["identity", "fwd+bwd"]) / m[f"copy_time_{stat}"] / 1e9
    )
    assert m["copy_fraction"] == pytest.approx(m["gbps"] / m["copy_gbps"])
    assert m["above_copy"] == float(m["gbps"] > m["copy_gbps"])
