"""CUDA timer: CUDA events around each sample, read only after a device synchronize.

Details: docs/methodology.md, "GPU check"."""

from __future__ import annotations

import math
from collections.abc import Callable

from normbench.timing.cache import flush_buffer
from normbench.timing.samples import Samples

MAX_INNER = 10_000  # warm mode: calls per sample at most
MAX_GRAPH_CALLS = 200  # graph mode: calls captured per graph at most (each keeps its own allocations)


class CudaTimer:
    def __init__(
        self,
        *,
        warmup: int = 3,
        samples: int = 20,
        min_sample_s: float = 2e-3,
        cache: str = "cold",
        graph: bool = False,
        device=None,
        inner: int | None = None,
    ):
        """inner: calls per sample in warm eager mode (None = calibrate to min_sample_s); cold mode
        always times one call per sample, graph mode calibrates its calls per graph."""
        import torch

        self.warmup = warmup
        self.samples = samples
        self.min_sample_s = min_sample_s
        self.cache = cache
        self.graph = graph
        self.inner = inner
        self.device = (
            torch.device("cuda", torch.cuda.current_device()) if device is None else torch.device(device)
        )
        self.flush = flush_buffer("cuda") if cache == "cold" else None
        self.name = "cuda-events" + ("+graph" if graph else "") + ("+l2-flush" if self.flush else "")

    def measure(self, fn: Callable[[], object]) -> Samples:
        import torch

        torch.cuda.synchronize(self.device)
        for _ in range(self.warmup):
            self._flush()
            fn()
        torch.cuda.synchronize(self.device)
        times, inner = self._graph_samples(fn) if self.graph else self._event_samples(fn)
        extra = {
            "cache": self.cache,
            "graph": self.graph,
            "flush_bytes": self.flush.nbytes if self.flush else 0,
            **read_clocks(self.device),
        }
        return Samples(times, inner, self.name, self.warmup, extra)

    def _flush(self) -> None:
        if self.flush is not None:
            self.flush()

    # -- eager: events around each sample -------------------------------------------------------------
    def _event_samples(self, fn) -> tuple[list[float], int]:
        import torch

        inner = 1 if self.flush else (self.inner or self._calls_for(fn, self.min_sample_s, MAX_INNER))
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(self.samples)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(self.samples)]
        for start, end in zip(starts, ends, strict=True):
            self._flush()
            start.record()
            for _ in range(inner):
                fn()
            end.record()
        torch.cuda.synchronize(self.device)  # elapsed_time is only valid once both events completed
        return [s.elapsed_time(e) * 1e-3 / inner for s, e in zip(starts, ends, strict=True)], inner

    def _calls_for(self, fn, target_s: float, cap: int) -> int:
        """How many back-to-back calls last about target_s, from three timed calls."""
        import torch

        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(3):
            fn()
        end.record()
        torch.cuda.synchronize(self.device)
        per_call = max(start.elapsed_time(end) * 1e-3 / 3, 1e-9)
        return max(1, min(cap, math.ceil(target_s / per_call)))

    # -- graph: replay n x (flush + fn), subtract n x flush ----------------------------------------
    def _graph_samples(self, fn) -> tuple[list[float], int]:
        import torch

        n = self._calls_for(fn, self.min_sample_s, MAX_GRAPH_CALLS)

        def body():
            for _ in range(n):
                self._flush()
                fn()

        # Warm up on a side stream before capture, as torch.cuda.graphs requires (lazy init, workspaces).
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            self._flush()
            fn()
        torch.cuda.current_stream(self.device).wait_stream(side)
        torch.cuda.synchronize(self.device)
        fn_graph = _capture(body)
        flush_graph = _capture(lambda: [self._flush() for _ in range(n)]) if self.flush else None
        fn_graph.replay()
        if flush_graph is not None:
            flush_graph.replay()
        events = [[torch.cuda.Event(enable_timing=True) for _ in range(4)] for _ in range(self.samples)]
        for a, b, c, d in events:
            a.record()
            fn_graph.replay()
            b.record()
            if flush_graph is not None:
                c.record()
                flush_graph.replay()
                d.record()
        torch.cuda.synchronize(self.device)
        times = []
        for a, b, c, d in events:
            total = a.elapsed_time(b)
            flush = c.elapsed_time(d) if flush_graph is not None else 0.0
            times.append((total - flush) * 1e-3 / n)
        return times, n


def _capture(body: Callable[[], object]):
    import torch

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        body()
    return graph


def read_clocks(device=None) -> dict:
    """Current and maximum SM clock and the memory clock (MHz) through NVML, or why they were not read."""
    try:
        import pynvml
    except ImportError as exc:
        return {"clocks": f"not read: pynvml not importable ({exc})"}
    try:
        pynvml.nvmlInit()
        handle = _nvml_handle(pynvml, device)
        return {
            "sm_clock_mhz": float(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)),
            "sm_clock_max_mhz": float(pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM)),
            "mem_clock_mhz": float(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM)),
        }
    except Exception as exc:  # NVMLError (no permission, driver mismatch, MIG) or a missing symbol
        return {"clocks": f"not read: {type(exc).__name__}: {exc}"}


def _nvml_handle(pynvml, device):
    """NVML's handle for a torch device, by PCI bus id (NVML ignores CUDA_VISIBLE_DEVICES; indices may differ)."""
    import torch

    props = torch.cuda.get_device_properties(device)
    if all(hasattr(props, a) for a in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
        bus = f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
        return pynvml.nvmlDeviceGetHandleByPciBusId(bus.encode())
    index = torch.cuda.current_device() if device is None else torch.device(device).index
    return pynvml.nvmlDeviceGetHandleByIndex(index or 0)


def device_info(device=None) -> dict:
    """Name, compute capability, SMs, L2, CUDA and cuDNN versions, and clocks of a CUDA device."""
    import torch

    props = torch.cuda.get_device_properties(device)
    return {
        "gpu": props.name,
        "gpu_cc": f"{props.major}.{props.minor}",
        "gpu_sms": props.multi_processor_count,
        "gpu_memory_gib": round(props.total_memory / 2**30, 1),
        "gpu_l2_mib": round(getattr(props, "L2_cache_size", 0) / 2**20, 1),
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        **read_clocks(device),
    }
