"""Nominal memory bandwidth of known GPUs, from the vendors' spec sheets. NOMINAL only: the reference a
case is judged against is the copy probe measured in the same run; these numbers are shown beside it
because a stale or wrong table is easy to write (TritonBench lists the H100 at 2000 GB/s; the SXM part's
HBM3 does 3350). Matched by substring of torch.cuda.get_device_name(), most specific first."""

from __future__ import annotations

from normbench.core.host import cpu_model

# (substring of the device name, nominal GB/s, the part the figure is for)
NOMINAL_GBPS: list[tuple[str, float, str]] = [
    ("GB200", 8000.0, "B200 in GB200, HBM3e"),
    ("B200", 8000.0, "B200 SXM, HBM3e"),
    ("GH200", 4000.0, "GH200 96 GB, HBM3"),
    ("H200", 4800.0, "H200 SXM 141 GB, HBM3e"),
    ("H100 NVL", 3900.0, "H100 NVL 94 GB, HBM3"),
    ("H100 PCIe", 2000.0, "H100 PCIe 80 GB, HBM2e"),
    ("H100", 3350.0, "H100 SXM 80 GB, HBM3"),
    ("H800", 3350.0, "H800 SXM, HBM3"),
    ("A100-SXM4-80GB", 2039.0, "A100 SXM 80 GB, HBM2e"),
    ("A100 80GB PCIe", 1935.0, "A100 PCIe 80 GB, HBM2e"),
    ("A100", 1555.0, "A100 40 GB, HBM2"),
    ("L40S", 864.0, "L40S, GDDR6"),
    ("L40", 864.0, "L40, GDDR6"),
    ("L4", 300.0, "L4, GDDR6"),
    ("A10G", 600.0, "A10G, GDDR6"),
    ("A10", 600.0, "A10, GDDR6"),
    ("RTX 4090", 1008.0, "GeForce RTX 4090, GDDR6X"),
    ("RTX 3090", 936.0, "GeForce RTX 3090, GDDR6X"),
    ("V100", 900.0, "V100 SXM2, HBM2"),
    ("T4", 320.0, "T4, GDDR6"),
    ("MI300X", 5300.0, "Instinct MI300X, HBM3"),
]


def nominal_peak(device_name: str) -> tuple[float, str] | None:
    """(GB/s, part) for a device name, or None when the table does not know it (every CPU)."""
    for key, gbps, part in NOMINAL_GBPS:
        if key in device_name:
            return gbps, part
    return None


def device_name(device: str) -> str:
    import torch

    if device == "cuda":
        return torch.cuda.get_device_name()

    return cpu_model()
