"""The bandwidth rows a latency case's copy probe (benches/_tensors.py::copy_step, timed like the norm)
anchors: GB/s, the probe's GB/s, the fraction of it, and the nominal peak of known GPUs."""

from __future__ import annotations

from normbench.benches._latency.roofline import device_name, nominal_peak
from normbench.benches._samples import sample_stat
from normbench.norms import get_norm


def bandwidth_rows(norm, impl: str, x, p: dict, t: float, copy_samples) -> list[dict]:
    """GB/s from the byte model at time t (the case's statistic); the copy probe's GB/s and the fraction of
    it (above 1 = implausible); the nominal peak where the device is in the table."""
    nbytes = norm.bytes_moved(impl, p["tokens"], p["d"], x.element_size(), p["mode"])
    gbps = nbytes / t / 1e9
    rows = [
        {"metric": "bytes", "unit": "B", "value": float(nbytes)},
        {"metric": "gbps", "unit": "GB/s", "value": gbps},
    ]
    if copy_samples is not None:
        copy_t = sample_stat(copy_samples.times, p["stat"])
        copy_bytes = get_norm("identity").bytes_moved(
            "copy", p["tokens"], p["d"], x.element_size(), p["mode"]
        )
        copy_gbps = copy_bytes / copy_t / 1e9
        rows += [
            {"metric": "copy_time_median", "unit": "s", "value": sample_stat(copy_samples.times, "median")},
            {"metric": "copy_time_min", "unit": "s", "value": min(copy_samples.times)},
            {"metric": "copy_gbps", "unit": "GB/s", "value": copy_gbps},
            {"metric": "copy_fraction", "unit": "ratio", "value": gbps / copy_gbps},
            {"metric": "above_copy", "unit": "bool", "value": float(gbps > copy_gbps)},
        ]
    if (peak := nominal_peak(device_name(p["device"]))) is not None:
        rows += [
            {"metric": "nominal_gbps", "unit": "GB/s", "value": peak[0], "part": peak[1]},
            {"metric": "nominal_fraction", "unit": "ratio", "value": gbps / peak[0], "part": peak[1]},
        ]
    return rows
