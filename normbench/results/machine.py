"""The parts of the environment fingerprint that decide whether two runs' numbers can be compared: the CPU's
speed-deciding instruction sets, RAM, torch's build, the thread pools torch actually loaded, and the plugin
distributions that registered something. Read with py-cpuinfo, psutil and threadpoolctl, not by parsing procfs.

Every function returns None (or an empty list) where a library cannot tell, so `normbench env` never fails on
an unusual machine."""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

# Instruction-set extensions that change which kernels oneDNN/MKL/ATen dispatch to, named as Linux's
# /proc/cpuinfo names them (py-cpuinfo reports them so on Linux): x86 vector widths and their
# fp16/bf16/int8 dot-product and matrix (AMX) extensions, and the Arm equivalents.
SPEED_FLAGS = frozenset(
    {
        "sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni",
        "avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl", "avx512ifma", "avx512vbmi",
        "avx512_vnni", "avx512_bf16", "avx512_fp16",
        "amx_tile", "amx_bf16", "amx_int8", "amx_fp16",
        "asimd", "asimdhp", "sve", "sve2", "bf16", "i8mm",
    }
)  # fmt: skip


def _canonical_flag(flag: str) -> str | None:
    """The /proc/cpuinfo name of a speed-deciding flag (py-cpuinfo also lists CPUID's 'avx512vnni'), else None."""
    flag = flag.lower()
    if flag in SPEED_FLAGS:
        return flag
    if flag.startswith("avx512") and f"avx512_{flag[6:]}" in SPEED_FLAGS:
        return f"avx512_{flag[6:]}"
    return None


@functools.cache
def cpu_flags() -> list[str] | None:
    """Sorted speed-deciding flags this CPU has (cached: py-cpuinfo asks CPUID in a child process, ~0.2 s)."""
    try:
        import cpuinfo

        flags = cpuinfo.get_cpu_info().get("flags") or []
    except Exception:  # not installed, or a platform it cannot read
        return None
    return sorted({c for f in flags if (c := _canonical_flag(str(f)))})


def ram_gib() -> float | None:
    """Physical memory in GiB."""
    try:
        import psutil

        return round(psutil.virtual_memory().total / 2**30, 1)
    except Exception:
        return None


def cpu_capability() -> str | None:
    """The vector ISA ATen's CPU kernels dispatch to here ('AVX512', 'AVX2', 'DEFAULT', ...)."""
    import torch

    get = getattr(getattr(torch.backends, "cpu", None), "get_cpu_capability", None)
    return get() if get is not None else None


# Build settings too long to read, but in the hash: compiler paths and flag strings.
_LONG_SETTINGS = ("CXX_FLAGS", "CUDA_FLAGS", "CXX_COMPILER")
_CAPABILITY_LINE = re.compile(r"^\s*-\s*CPU capability usage:.*$", re.MULTILINE)


def torch_config(text: str | None = None) -> dict:
    """torch.__config__.show() made compact: its `- ...` lines (compiler, MKL, oneDNN, OpenMP versions), the
    build settings except the long compiler strings, and the sha256 of the whole text. The runtime 'CPU
    capability usage' line is left out of both (it is this machine's, recorded as cpu_capability), so two
    machines running one torch build get one hash."""
    if text is None:
        import torch

        text = torch.__config__.show()
    text = _CAPABILITY_LINE.sub("", text)
    built, settings = [], {}
    for line in text.splitlines():
        item = line.strip().removeprefix("-").strip()
        if item.startswith("Build settings:"):
            for part in re.split(r",\s*(?=[A-Z][A-Z0-9_]*=)", item.split(":", 1)[1]):
                key, _, value = part.strip().rstrip(",").partition("=")
                if key and key not in _LONG_SETTINGS:
                    settings[key] = value.strip()
        elif item and not item.endswith("built with:"):
            built.append(item)
    sha = hashlib.sha256(text.encode()).hexdigest()
    return {"built_with": built, "settings": settings, "sha256": sha}


def threadpools() -> list[dict]:
    """The OpenMP and BLAS pools loaded in this process (after torch's import), as threadpoolctl sees them."""
    try:
        from threadpoolctl import threadpool_info

        pools = threadpool_info()
    except Exception:
        return []
    rows = [
        {
            "user_api": p.get("user_api"),
            "internal_api": p.get("internal_api"),
            "version": p.get("version"),
            "num_threads": p.get("num_threads"),
            "library": Path(p.get("filepath") or "?").name,
        }
        for p in pools
    ]
    return sorted(rows, key=lambda r: (str(r["user_api"]), r["library"]))
