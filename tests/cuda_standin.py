"""A CPU-backed stand-in for the part of the CUDA API that normbench's GPU path calls, so that path runs on
every CI machine: events read a device clock that advances 1 µs per torch operation (deterministic: the
host clock's noise made graph mode's flush-subtracted times negative), synchronize is a no-op, a captured graph replays its body
eagerly, tensors asked for on "cuda" live on the CPU (a TorchFunctionMode rewrites the device), and memory
statistics and NVML answer fixed values. Each replaced function is a mock autospecced from torch's own, so a
call with arguments the real API would refuse fails here too. `torch.cuda.normbench_standin` marks the
stand-in: the store refuses to write rows while it is set (results/store.py), so no row it produced is ever
stored or reported as a GPU result."""

from __future__ import annotations

import contextlib
import sys
import types
from unittest import mock

import torch
from torch.overrides import TorchFunctionMode

NAME = "normbench CPU stand-in (not a GPU)"
L2_BYTES = 4 * 2**20


def _cpu(value):
    if isinstance(value, torch.device) and value.type == "cuda":
        return torch.device("cpu")
    if isinstance(value, str) and value.startswith("cuda"):
        return "cpu"
    return value


class CudaOnCpu(TorchFunctionMode):
    """Every torch call that names a CUDA device (a factory's device=, Tensor.to, Tensor.cuda) gets the CPU;
    `ops` counts the calls: the stand-in's device clock."""

    ops = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        CudaOnCpu.ops += 1
        kwargs = {k: _cpu(v) for k, v in (kwargs or {}).items()}
        if func is torch.Tensor.cuda:
            return args[0]
        return func(*[_cpu(a) for a in args], **kwargs)


class _CpuGenerator(torch.Generator):
    """torch.Generator(device="cuda") gives a CPU generator (a class, not a torch function: no mode sees it)."""

    def __new__(cls, device="cpu"):
        return super().__new__(cls, device=_cpu(device))


def _spec(real, impl):
    """A mock with `real`'s signature (autospec) that does `impl`."""
    return mock.create_autospec(real, side_effect=impl)


def _event_class():
    real = torch.cuda.Event

    def make(enable_timing=False, blocking=False, interprocess=False, **_):
        event = mock.create_autospec(real, instance=True)
        event.when = None
        event.record.side_effect = lambda stream=None: setattr(event, "when", CudaOnCpu.ops)
        event.elapsed_time.side_effect = lambda end: (end.when - event.when) * 1e-3  # ms at 1 µs an op
        return event

    return _spec(real, make)


def _stream_class():
    real = torch.cuda.Stream

    def make(device=None, priority=0, **_):
        stream = mock.create_autospec(real, instance=True)
        stream.wait_stream.side_effect = lambda other: None
        return stream

    return _spec(real, make)


class _Capture:
    """`with torch.cuda.graph(g): body()` on the CPU: the body runs once as the capture (a CUDA capture
    runs it too), and g.replay() runs it again: the function that holds the `with` must name it `body`
    (timing/cuda.py's _capture)."""

    def __init__(self, graph):
        self.graph = graph

    def __enter__(self):
        caller = sys._getframe(1).f_locals
        if not callable(caller.get("body")):
            raise AssertionError(
                "the CUDA stand-in replays the callable named `body` where the graph is captured"
            )
        self.graph.body = caller["body"]
        return self

    def __exit__(self, *exc):
        return False


def _graph_class():
    real = torch.cuda.CUDAGraph

    def make(*args, **kwargs):
        graph = mock.create_autospec(real, instance=True)
        graph.body = None
        graph.replay.side_effect = lambda: graph.body()
        return graph

    return _spec(real, make)


def _properties():
    return types.SimpleNamespace(
        name=NAME,
        major=9,
        minor=0,
        multi_processor_count=1,
        total_memory=2**30,
        L2_cache_size=L2_BYTES,
        pci_domain_id=0,
        pci_bus_id=1,
        pci_device_id=0,
    )


def fake_pynvml():
    """The few NVML calls timing/cuda.py's read_clocks makes, answering fixed clocks (pynvml is not installed
    on CPU machines, so there is no real signature to take: the names are NVML's, checked by attribute)."""
    nvml = types.ModuleType("pynvml")
    nvml.NVML_CLOCK_SM, nvml.NVML_CLOCK_MEM = 1, 2
    nvml.nvmlInit = mock.Mock(return_value=None)
    nvml.nvmlDeviceGetHandleByPciBusId = mock.Mock(return_value="handle")
    nvml.nvmlDeviceGetHandleByIndex = mock.Mock(return_value="handle")
    nvml.nvmlDeviceGetClockInfo = mock.Mock(side_effect=lambda h, kind: {1: 1500, 2: 2600}[kind])
    nvml.nvmlDeviceGetMaxClockInfo = mock.Mock(return_value=1980)
    return nvml


@contextlib.contextmanager
def cuda_standin(nvml: bool = True):
    """The stand-in in force for the block: torch.cuda's functions replaced, tensors on the CPU."""
    cuda = torch.cuda
    peak = {"bytes": 0}
    replaced = {
        "is_available": _spec(cuda.is_available, lambda: True),
        "synchronize": _spec(cuda.synchronize, lambda device=None: None),
        "current_device": _spec(cuda.current_device, lambda: 0),
        "device_count": _spec(cuda.device_count, lambda: 1),
        "get_device_name": _spec(cuda.get_device_name, lambda device=None: NAME),
        "get_device_properties": _spec(cuda.get_device_properties, lambda device=None: _properties()),
        "is_bf16_supported": _spec(cuda.is_bf16_supported, lambda including_emulation=True: True),
        "reset_peak_memory_stats": _spec(
            cuda.reset_peak_memory_stats, lambda device=None: peak.update(bytes=0)
        ),
        "memory_allocated": _spec(cuda.memory_allocated, lambda device=None: 0),
        "max_memory_allocated": _spec(cuda.max_memory_allocated, lambda device=None: peak["bytes"]),
        "empty_cache": _spec(cuda.empty_cache, lambda: None),
        "current_stream": _spec(cuda.current_stream, lambda device=None: cuda.Stream(device)),
        "stream": _spec(cuda.stream, lambda stream: contextlib.nullcontext()),
        "Event": _event_class(),
        "Stream": _stream_class(),
        "CUDAGraph": _graph_class(),
        "graph": _spec(cuda.graph, lambda cuda_graph, pool=None, stream=None, **kw: _Capture(cuda_graph)),
    }
    with contextlib.ExitStack() as stack:
        for name, value in replaced.items():
            stack.enter_context(mock.patch.object(cuda, name, value))
        stack.enter_context(mock.patch.object(torch, "Generator", _CpuGenerator))
        stack.enter_context(mock.patch.object(torch.version, "cuda", "stand-in", create=True))
        stack.enter_context(mock.patch.object(cuda, "normbench_standin", True, create=True))
        if nvml:
            # only this key: patch.dict(sys.modules) would also drop every module imported meanwhile (numpy's
            # lazily imported C extensions among them), and a later import of those fails in this process
            stack.enter_context(_module("pynvml", fake_pynvml()))
        stack.enter_context(CudaOnCpu())
        stack.callback(_forget_cuda_buffers)
        yield peak


@contextlib.contextmanager
def _module(name: str, module):
    """sys.modules[name] = module for the block, then what was there before (or nothing)."""
    missing = object()
    before = sys.modules.get(name, missing)
    sys.modules[name] = module
    try:
        yield module
    finally:
        if before is missing:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = before


def _forget_cuda_buffers() -> None:
    """The process keeps one flush buffer per device (timing/cache.py): the stand-in's is a CPU tensor, which
    a real CUDA timer later in the same process must not find."""
    from normbench.timing import cache

    for key in [k for k in cache._buffers if k[0] == "cuda"]:
        del cache._buffers[key]
