"""The environment keys that decide comparability (cpu_flags, cpu_capability, ram_gib, torch_config,
threadpools, plugins): parsed right from known texts, checked against independent sources on this machine,
and stored in every run's manifest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_child_env

from normbench.results import machine as c

CONFIG = """PyTorch built with:
  - GCC 13.3
  - C++ Version: 202002
  - Intel(R) MKL-DNN v3.12.0 (Git Hash 80afa71049cd69a3df32adcccb623b12cd7baa22)
  - OpenMP 201511 (a.k.a. OpenMP 4.5)
  - CPU capability usage: AVX512
  - Build settings: BLAS_INFO=mkl, BUILD_TYPE=Release, CUDA_FLAGS= -DX -Xfatbin -compress-all, CXX_COMPILER=/usr/bin/c++, CXX_FLAGS= -O2 -fPIC -Wall, TORCH_VERSION=2.13.0, USE_CUDA=0, USE_MKLDNN=ON, USE_OPENMP=ON,
"""


def test_torch_config_keeps_the_key_lines_and_settings():
    cfg = c.torch_config(CONFIG)
    assert cfg["built_with"] == [
        "GCC 13.3",
        "C++ Version: 202002",
        "Intel(R) MKL-DNN v3.12.0 (Git Hash 80afa71049cd69a3df32adcccb623b12cd7baa22)",
        "OpenMP 201511 (a.k.a. OpenMP 4.5)",
    ]
    assert cfg["settings"] == {
        "BLAS_INFO": "mkl",
        "BUILD_TYPE": "Release",
        "TORCH_VERSION": "2.13.0",
        "USE_CUDA": "0",
        "USE_MKLDNN": "ON",
        "USE_OPENMP": "ON",
    }


def test_torch_config_hash_tells_builds_apart_but_not_machines():
    same_build_avx2 = CONFIG.replace("CPU capability usage: AVX512", "CPU capability usage: AVX2")
    other_flags = CONFIG.replace(
        "-O2 -fPIC", "-O3 -fPIC"
    )  # only in the dropped CXX_FLAGS: still another build
    assert c.torch_config(same_build_avx2)["sha256"] == c.torch_config(CONFIG)["sha256"]
    assert c.torch_config(other_flags)["sha256"] != c.torch_config(CONFIG)["sha256"]


def test_cpu_flags_keep_the_speed_deciding_ones_under_their_linux_names(monkeypatch):
    flags = ["fpu", "sse2", "avx2", "fma", "avx512f", "avx512vnni", "avx512_vnni", "amx_tile", "amx_bf16"]
    fake = type(sys)("cpuinfo")
    fake.get_cpu_info = lambda: {"flags": flags}
    monkeypatch.setitem(sys.modules, "cpuinfo", fake)
    c.cpu_flags.cache_clear()
    try:
        assert c.cpu_flags() == ["amx_bf16", "amx_tile", "avx2", "avx512_vnni", "avx512f", "fma"]
    finally:
        c.cpu_flags.cache_clear()


@pytest.mark.skipif(
    not Path("/proc/cpuinfo").is_file(), reason="Linux: /proc/cpuinfo as the independent source"
)
def test_cpu_flags_match_proc_cpuinfo_here():
    proc = set()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith(("flags", "Features")):
            proc |= set(line.split(":", 1)[1].split())
    assert c.cpu_flags() == sorted(proc & c.SPEED_FLAGS)


def test_ram_matches_the_page_count():
    pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
    assert c.ram_gib() == pytest.approx(pages, rel=0.01, abs=0.1)


def test_threadpools_name_the_loaded_libraries():
    import torch  # noqa: F401  (its OpenMP runtime is what the pools must show)

    pools = c.threadpools()
    assert pools, "torch loads an OpenMP runtime or a BLAS"
    for pool in pools:
        assert set(pool) == {"user_api", "internal_api", "version", "num_threads", "library"}
        assert pool["user_api"] in ("openmp", "blas") and "/" not in pool["library"]
        assert isinstance(pool["num_threads"], int) and pool["num_threads"] >= 1


def test_env_json_lists_an_env_plugin_module_with_no_distribution(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "normbench", "env", "--json"],
        cwd=tmp_path,
        env=make_child_env(NORMBENCH_PLUGINS="normbench_test_norms"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    env = json.loads(done.stdout)
    assert env["plugins"] == [
        {
            "name": "normbench_test_norms",
            "version": None,
            "registered": ["NORMBENCH_PLUGINS:normbench_test_norms"],
        }
    ]
    for key in ("cpu_flags", "cpu_capability", "ram_gib", "torch_config", "threadpools"):
        assert key in env
    assert isinstance(env["cpu_flags"], list) and env["torch_config"]["settings"].get("TORCH_VERSION")


def test_every_run_stores_the_keys(tiny_run):
    results, run_id = tiny_run
    env = json.loads((results / run_id / "manifest.json").read_text())["env"]
    assert env["cpu_flags"] == c.cpu_flags()
    assert env["torch_config"] == c.torch_config()
    assert env["ram_gib"] == c.ram_gib()
    assert all(set(p) == {"name", "version", "registered"} for p in env["plugins"])
    assert {p["library"] for p in env["threadpools"]} == {p["library"] for p in c.threadpools()}
