"""Cache flushing between timed samples ("cold" cache).

A memory-bound kernel timed back to back finds its input still in the last-level cache (CPU) or L2 (GPU)
and reports bandwidth the memory system cannot deliver (TileGym#82: 5019 GB/s claimed, 1434 real). Cold
mode rewrites a buffer at least twice the cache's size before every sample, so the timed call starts with
its tensors evicted. The buffer holds random bits and is inverted in place each flush: never constant, so
no compression (oneDNN#4699 found zero-fill can be compressed), and every byte is read and written.
"""

from __future__ import annotations

from pathlib import Path

# When the cache size cannot be read: larger than the last-level cache of current server CPUs other than
# AMD's 3D V-Cache parts, and than every GPU L2 (H100 50 MiB, B200 126 MiB). Stated in docs/methodology.md.
FALLBACK_CACHE_BYTES = 256 * 2**20
_SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")
_buffers: dict[tuple[str, int], FlushBuffer] = {}


def cpu_llc_bytes(sysfs: Path = _SYSFS_CACHE) -> tuple[int, str]:
    """(size in bytes, where it came from) of the CPU's last-level cache: the highest cache level in sysfs,
    else `getconf LEVEL3_CACHE_SIZE`, else FALLBACK_CACHE_BYTES."""
    best = (0, 0)
    for index in sorted(sysfs.glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = _parse_size((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind != "Instruction" and (level, size) > best:
            best = (level, size)
    if best[1]:
        return best[1], f"sysfs L{best[0]}"
    size = _getconf_l3()
    if size:
        return size, "getconf LEVEL3_CACHE_SIZE"
    return FALLBACK_CACHE_BYTES, "fallback (cache size unreadable)"


def _parse_size(text: str) -> int:
    """'48K', '2048K', '260M' or a plain byte count, as sysfs writes cache sizes."""
    text = text.strip().upper()
    scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
    return int(text.rstrip("KMGB") or 0) * scale


def _getconf_l3() -> int:
    import subprocess

    try:
        out = subprocess.run(
            ["getconf", "LEVEL3_CACHE_SIZE"], capture_output=True, text=True, timeout=5
        ).stdout
        return int(out.strip() or 0)
    except (OSError, ValueError, subprocess.SubprocessError):
        return 0


def gpu_l2_bytes(device=None) -> tuple[int, str]:
    """(L2 size in bytes, source) of a CUDA device, from its properties; fallback when torch does not say."""
    import torch

    size = int(
        getattr(torch.cuda.get_device_properties(device or torch.cuda.current_device()), "L2_cache_size", 0)
    )
    if size > 0:
        return size, "cuda device properties"
    return FALLBACK_CACHE_BYTES, "fallback (L2_cache_size not reported)"


class FlushBuffer:
    """A random int32 buffer of `nbytes` on `device`; calling it inverts every element in place (one read
    and one write of the whole buffer), which evicts what the timed call left in the cache."""

    def __init__(self, nbytes: int, device: str = "cpu"):
        import torch

        g = torch.Generator().manual_seed(0x5EED)
        n = max(1, nbytes // 4)
        # One 16 MiB block of random bits, tiled: generating 1 GiB of random numbers takes seconds, and a
        # repeated 16 MiB pattern is as incompressible as a fresh one for caches that compress small blocks.
        block = torch.randint(-(2**31), 2**31 - 1, (min(n, 1 << 22),), dtype=torch.int32, generator=g).to(
            device
        )
        self.buf = torch.empty(n, dtype=torch.int32, device=device)
        for start in range(0, n, block.numel()):
            stop = min(n, start + block.numel())
            self.buf[start:stop].copy_(block[: stop - start])
        self.nbytes = n * 4
        self.device = device

    def __call__(self) -> None:
        self.buf.bitwise_not_()


def flush_buffer(device: str = "cpu") -> FlushBuffer:
    """The process-wide flush buffer of a device (allocated once: twice the LLC is 520 MiB on a 260 MiB L3),
    sized 2x the cache so that an LRU-like policy keeps none of the timed call's lines."""
    if device == "cpu":
        size, _ = cpu_llc_bytes()
    else:
        size, _ = gpu_l2_bytes()
    key = (device, size)
    if key not in _buffers:
        _buffers[key] = FlushBuffer(2 * size, device)
    return _buffers[key]
