"""The page size behind a CPU process's tensors: transparent huge pages (2 MiB) or base pages (4 KiB),
chosen once per process before torch allocates, and measured per case (docs/methodology.md, "Pages").

Why: on 2 MiB pages memory-bound ops on 16 MiB tensors ran 25-30% faster (RMSNorm and a copy at
4096x1024, 1 thread, a 2-core EPYC VM). They do not remove the spread between processes: timed over many
rounds, fresh processes agreed within 1-4% in either page state, and what remains is the machine's own
speed (timing/canary.py). torch's CPU allocator madvises large blocks for huge pages only under
THP_MEM_ALLOC_ENABLE=1, which c10 reads once, at the process's first CPU allocation.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

from normbench.core.errors import NormbenchError
from normbench.core.settings import env_setting
from normbench.timing.process import storages

STATES = ("huge", "base")
ENV_VAR = "NORMBENCH_PAGES"
TORCH_ENV = "THP_MEM_ALLOC_ENABLE"  # c10/core/alloc_cpu.cpp: is_thp_alloc_enabled(), a static
THP_DIR = Path("/sys/kernel/mm/transparent_hugepage")
PR_SET_THP_DISABLE, PR_GET_THP_DISABLE = 41, 42  # linux/prctl.h
# A case where huge pages were asked for and less than this share of its tensors got them is flagged.
LOW_SHARE = 0.5

_applied: dict | None = None


def kernel_thp() -> dict:
    """The kernel's THP settings (the bracketed choice of each file), 'unknown' where not on Linux."""
    out = {}
    for key, rel in (
        ("thp_enabled", "enabled"),
        ("thp_defrag", "defrag"),
        ("thp_khugepaged_defrag", "khugepaged/defrag"),
    ):
        try:
            text = (THP_DIR / rel).read_text().strip()
        except OSError:
            out[key] = "unknown"
            continue
        chosen = [w[1:-1] for w in text.split() if w.startswith("[")]
        out[key] = chosen[0] if chosen else text  # khugepaged/defrag is a bare 0 or 1
    return out


def default_state() -> str:
    """huge where the kernel gives huge pages to a process that asks (enabled = always or madvise)."""
    return "huge" if kernel_thp()["thp_enabled"] in ("always", "madvise") else "base"


def check_state(value, where: str = "pages") -> str | None:
    """None when value names a page state, else the problem (for suite validation and options)."""
    if value in STATES:
        return None
    return f"{where}: {value!r} is not one of {', '.join(STATES)}"


def chosen_state(option: str | None = None, *, stored: str | None = None, suite: str | None = None) -> str:
    """The one resolver of a process's page state: --pages, else NORMBENCH_PAGES, else the resumed run's
    state (`stored`), else the suite's `pages`, else default_state(). A bad --pages or NORMBENCH_PAGES
    raises NormbenchError; the suite's value was validated with its key path when it was loaded."""
    env = check_pages(option)
    for value in (option, env, stored, suite):
        if value in STATES:
            return value
    return default_state()


def check_pages(option: str | None) -> str | None:
    """Refuse a bad --pages or NORMBENCH_PAGES (NormbenchError); returns NORMBENCH_PAGES, None when unset."""
    env = env_setting(ENV_VAR)
    for value, where in ((option, "--pages"), (env, ENV_VAR)):
        if value is not None and (problem := check_state(value, where)):
            raise NormbenchError(problem)
    return env


def worker_env() -> dict[str, str]:
    """The variables that put a Ray worker in this process's state (executors/ray_cluster.py passes them
    on; the worker's torch reads its part at its first allocation): the only way the state travels."""
    if _applied is None:
        return {}
    return {ENV_VAR: _applied["asked"], TORCH_ENV: "1" if _applied["asked"] == "huge" else "0"}


def apply_state(state: str) -> dict:
    """Put this process in `state` (once; later calls return the first result): huge sets
    THP_MEM_ALLOC_ENABLE=1 and clears the process's THP-disable flag (inherited across fork and exec);
    base sets THP_MEM_ALLOC_ENABLE=0 and prctl(PR_SET_THP_DISABLE, 1), so even enabled = always gives 4 KiB
    pages. Where torch was imported first, its allocator may already have read the variable: the result
    then says so and a warning is issued. Returns {"asked", "set", "note"}."""
    global _applied
    if _applied is not None:
        if state != _applied["asked"]:
            kept = _applied["asked"]
            warnings.warn(f"pages={state}: set once per process; it stays {kept}", stacklevel=2)
        return _applied
    late = "torch" in sys.modules and os.environ.get(TORCH_ENV) != ("1" if state == "huge" else "0")
    os.environ[TORCH_ENV] = "1" if state == "huge" else "0"
    prctl_ok = _set_thp_disable(state == "base")
    note = ""
    if late:
        note = "torch was imported before the page state was set: its allocator may keep the earlier state"
    if not prctl_ok:
        note = (note + "; " if note else "") + "prctl(PR_SET_THP_DISABLE) unavailable"
    if note:
        warnings.warn(f"pages={state}: {note}", stacklevel=2)
    _applied = {"asked": state, "set": not note, "note": note}
    return _applied


def clear_state() -> None:
    """The kernel's default for a process (a plain peer's state): neither variable, THP not disabled."""
    os.environ.pop(ENV_VAR, None)
    os.environ.pop(TORCH_ENV, None)
    _set_thp_disable(False)


def _set_thp_disable(disable: bool) -> bool:
    if not sys.platform.startswith("linux"):
        return not disable  # nothing to clear; base cannot be forced
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_THP_DISABLE, int(disable), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def thp_disabled() -> bool | None:
    """The process's THP-disable flag (prctl), None where it cannot be read."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        value = ctypes.CDLL(None).prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        return None
    return None if value < 0 else bool(value)


def process_state() -> dict:
    """What this process's tensors get, for the run's env: the state applied (else NORMBENCH_PAGES), torch's
    variable, the THP-disable flag and the kernel's settings."""
    note = {"pages_note": _applied["note"]} if _applied and _applied["note"] else {}
    return {
        "pages": _applied["asked"] if _applied else os.environ.get(ENV_VAR) or "unset",
        **note,
        "thp_mem_alloc_enable": os.environ.get(TORCH_ENV),
        "thp_disabled": thp_disabled(),
        **kernel_thp(),
    }


def process_huge_share() -> float | None:
    """AnonHugePages / Anonymous of the whole process (/proc/self/smaps_rollup): the share of all its
    anonymous memory, temporaries' free blocks included, on huge pages. None where unreadable."""
    try:
        text = Path("/proc/self/smaps_rollup").read_text()
    except OSError:
        return None
    fields = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("Anonymous:", "AnonHugePages:"):
            fields[parts[0]] = int(parts[1])
    anon = fields.get("Anonymous:", 0)
    return fields.get("AnonHugePages:", 0) / anon if anon else None


def mappings() -> list[tuple[int, int, int, int]] | None:
    """(start, end, anon_huge_bytes, rss_bytes) of every mapping in /proc/self/smaps; None off Linux."""
    try:
        text = Path("/proc/self/smaps").read_text()
    except OSError:
        return None
    out, current = [], None
    for line in text.splitlines():
        head = line.split(None, 1)[0]
        if "-" in head and not head.endswith(":"):
            lo, hi = head.split("-")
            current = [int(lo, 16), int(hi, 16), 0, 0]
            out.append(current)
        elif current is not None and head == "AnonHugePages:":
            current[2] = int(line.split()[1]) * 1024
        elif current is not None and head == "Rss:":
            current[3] = int(line.split()[1]) * 1024
    return [tuple(m) for m in out]


def huge_share(ranges: list[tuple[int, int]], maps=None) -> float | None:
    """The share of the bytes in `ranges` ((address, nbytes) pairs) backed by huge pages, from the
    AnonHugePages of the mappings that cover them. smaps counts per mapping, not per page, so a mapping's
    huge bytes are spread evenly over it: exact for torch's madvised blocks (each its own mapping, as
    madvise splits the heap), an estimate inside a mixed mapping. None where smaps cannot be read."""
    maps = mappings() if maps is None else maps
    if maps is None:
        return None
    total = sum(n for _, n in ranges)
    if total == 0:
        return None
    huge = 0.0
    for start, n in ranges:
        end = start + n
        for lo, hi, anon_huge, _rss in maps:
            overlap = min(end, hi) - max(start, lo)
            if overlap > 0 and anon_huge:
                huge += overlap * min(1.0, anon_huge / (hi - lo))
    return min(1.0, huge / total)


def tensor_ranges(*objects) -> list[tuple[int, int]]:
    """(address, nbytes) of each CPU storage among tensors in objects (nested lists/tuples/dicts), once each."""
    return [(ptr, nbytes) for ptr, nbytes, device in storages(*objects) if device == "cpu" and nbytes]
