"""The environment fingerprint stored with every run and printed by `normbench env`: what a reader needs
to judge whether two runs are comparable."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import normbench


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_sha(path: Path | None = None) -> str | None:
    """The commit of the normbench checkout (None when installed from a wheel); '+dirty' when modified."""
    path = path or Path(normbench.__file__).resolve().parent.parent
    try:
        sha = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        if sha.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return sha.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def fingerprint() -> dict:
    import torch

    env = {
        "normbench": normbench.__version__,
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
    }
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        env.update(
            gpu=props.name,
            gpu_count=torch.cuda.device_count(),
            gpu_memory_gib=round(props.total_memory / 2**30, 1),
            gpu_l2_mib=round(getattr(props, "L2_cache_size", 0) / 2**20, 1),
            cudnn=torch.backends.cudnn.version(),
            timer_cuda="CUDA events per sample, synchronized",
        )
    return env


def machine_summary(env: dict) -> str:
    """One line naming the machine, for table captions and plot titles."""
    where = env.get("gpu") or env.get("cpu", "?")
    return f"{where}, {env.get('torch_threads')} threads, torch {env.get('torch')}"
