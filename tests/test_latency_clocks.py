"""GPU clocks are read through NVML when pynvml imports, and their absence is stated, not guessed (runs
without a GPU: NVML and the device handle are faked)."""

from __future__ import annotations

import sys
import types

from normbench.timing import cuda as cuda_mod


def test_clocks_from_nvml(monkeypatch):
    fake = types.SimpleNamespace(
        NVML_CLOCK_SM=0,
        NVML_CLOCK_MEM=2,
        nvmlInit=lambda: None,
        nvmlDeviceGetClockInfo=lambda handle, kind: {0: 1755, 2: 2619}[kind],
        nvmlDeviceGetMaxClockInfo=lambda handle, kind: 1980,
    )
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setattr(cuda_mod, "_nvml_handle", lambda pynvml, device: "handle")
    assert cuda_mod.read_clocks(0) == {
        "sm_clock_mhz": 1755.0,
        "sm_clock_max_mhz": 1980.0,
        "mem_clock_mhz": 2619.0,
    }


def test_clocks_not_read_say_why(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails
    assert cuda_mod.read_clocks(0)["clocks"].startswith("not read: pynvml not importable")

    def failing_init():
        raise RuntimeError("NVML_ERROR_NO_PERMISSION")

    monkeypatch.setitem(sys.modules, "pynvml", types.SimpleNamespace(nvmlInit=failing_init))
    assert cuda_mod.read_clocks(0)["clocks"] == "not read: RuntimeError: NVML_ERROR_NO_PERMISSION"
