"""The environment fingerprint stored with every run and printed by `normbench env`: what a reader needs
to judge whether two runs are comparable."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from normbench.core.host import cpu_model
from normbench.core.plugins import loaded_plugins
from normbench.core.version import __version__
from normbench.results import machine as c
from normbench.timing.cache import cpu_llc_bytes
from normbench.timing.cuda import device_info
from normbench.timing.pages import process_state


def own_checkout(path: Path) -> bool:
    """True when `path` is the root of a normbench source checkout: its pyproject names normbench and git
    tracks it. A wheel installed inside some other repository (a venv in a project folder) is not one, so
    that repository's HEAD is never recorded as normbench's commit."""
    try:
        pyproject = (path / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return False
    return (path / ".git").exists() and 'name = "normbench"' in pyproject


def git_sha(path: Path | None = None) -> str | None:
    """The commit of the normbench checkout (None when installed from a wheel); '+dirty' when modified."""
    path = path or Path(__file__).resolve().parents[2]  # the checkout holding normbench/
    if not own_checkout(path):
        return None
    try:
        sha = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
        if sha.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
        return sha.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "KMP_AFFINITY", "OMP_PROC_BIND")


def library_versions() -> dict:
    """Versions of the numeric stack that can change a number (None when a library is absent)."""
    out = {}
    for name in ("numpy", "scipy", "pandas", "pyarrow"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def cpu_governor() -> str | None:
    """The frequency governor of cpu0 ('performance', 'powersave', ...), where Linux exposes it."""
    try:
        return Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").read_text().strip()
    except OSError:
        return None


def fingerprint() -> dict:
    import torch

    env = {
        "normbench": __version__,
        "git_sha": git_sha(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "hostname": socket.gethostname(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "cuda": torch.version.cuda,
        "cuda_available": torch.cuda.is_available(),
        "timer_cpu": "time.perf_counter_ns around a calibrated inner loop",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        **library_versions(),
        "cpu_governor": cpu_governor(),
        "thread_env": {k: os.environ[k] for k in THREAD_VARS if k in os.environ},
    }

    llc, source = cpu_llc_bytes()
    env.update(cpu_llc_mib=round(llc / 2**20, 1), cpu_llc_source=source)

    env.update(process_state())  # pages (huge/base, as the CLI set it) and the kernel's THP settings
    env.update(machine_facts())
    if torch.cuda.is_available():
        env.update(
            device_info(0),
            gpu_count=torch.cuda.device_count(),
            timer_cuda="CUDA events per sample, synchronized; L2 flush (2x L2) in cold mode",
        )
    return env


def machine_facts() -> dict:
    """What decides whether two runs compare (results/machine.py); compare reads cpu_flags
    (analysis/compare/comparability.py). Plugins: those imported so far (a run has imported its suite's norms and benches by now)."""
    return {
        "cpu_flags": c.cpu_flags(),
        "cpu_capability": c.cpu_capability(),
        "ram_gib": c.ram_gib(),
        "torch_config": c.torch_config(),
        "threadpools": c.threadpools(),
        "plugins": loaded_plugins(),
    }


NODE_FIELDS = ("hostname", "cpu", "cpu_count", "cpu_flags", "torch", "cuda", "gpu")


def fingerprint_of_node() -> dict:
    """The fingerprint fields that can differ between the nodes of one cluster (cached per process)."""
    global _NODE
    if _NODE is None:
        env = fingerprint()
        _NODE = {k: env.get(k) for k in NODE_FIELDS}
    return dict(_NODE)


_NODE: dict | None = None


def threads_phrase(threads) -> str:
    """'1 thread', '2 threads'."""
    return f"{threads} thread{'' if threads == 1 else 's'}"


def machine_summary(env: dict) -> str:
    """One line naming the machine, for table captions and plot titles."""
    where = env.get("gpu") or env.get("cpu", "?")
    return f"{where}, {threads_phrase(env.get('torch_threads'))}, torch {env.get('torch')}"


def machines_of(manifests: list[dict]) -> str:
    """The machines of several runs (shards, or runs being combined), each named once."""
    return "; ".join(sorted({machine_summary(m.get("env", {})) for m in manifests}))
