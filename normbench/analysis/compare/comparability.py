"""Which environment differences make two runs' values incomparable, by metric kind: timings (the machine,
its load, the software), paired ratios (not load nor core count: the machine's speed cancels in a ratio
taken within one round) and deterministic values (only what changes the arithmetic). The rules and why:
docs/ci.md, "Which differences make a case not comparable"."""

from __future__ import annotations

import pandas as pd

# python: the interpreter's per-call overhead is part of a microsecond-scale time
# pages: huge or base pages behind CPU tensors move a memory-bound time as much as a thread count does
# overrides: the plugins that replaced a built-in name (run --allow-override) decide what a name measured
TIMING_FIELDS = (
    "cpu",
    "cpu_count",
    "torch_threads",
    "pages",
    "torch",
    "python",
    "gpu",
    "cuda",
    "cudnn",
    "overrides",
)
NUMERIC_FIELDS = ("torch", "instruction_set", "gpu", "cuda", "overrides")
# Paired ratios (a time over the reference's or the copy probe's, taken in the same rounds: timing/paired.py)
# cancel the machine's speed, so load, the core count and the hostname do not matter; what decides which
# kernels ran and how they scale still does: the CPU model and flags, threads, page state, software, GPU.
PAIRED_FIELDS = ("instruction_set", *(f for f in TIMING_FIELDS if f != "cpu_count"))


def instruction_set(env: dict, other: dict) -> object:
    """The speed- and rounding-deciding CPU flags (manifest env `cpu_flags`, a sorted list). A run stored
    before the manifest had them (or compared with one that lacks them) falls back to the CPU model string:
    the same model has the same instruction set."""
    if env.get("cpu_flags") is not None and other.get("cpu_flags") is not None:
        return _flags(env["cpu_flags"])
    return env.get("cpu")


def _flags(value) -> tuple[str, ...]:
    """A sorted tuple whether the manifest holds a list or one string ("avx2 avx512f" or "avx2,avx512f")."""
    items = value.replace(",", " ").split() if isinstance(value, str) else value
    return tuple(sorted(str(f) for f in items))


def _field(env: dict, other: dict, name: str):
    return instruction_set(env, other) if name == "instruction_set" else env.get(name)


def _describe(name: str, a, b) -> str:
    if name == "instruction_set" and isinstance(a, tuple) and isinstance(b, tuple):
        gone, added = sorted(set(a) - set(b)), sorted(set(b) - set(a))
        parts = [f"-{f}" for f in gone] + [f"+{f}" for f in added]
        return "cpu_flags: " + " ".join(parts)
    label = "cpu (instruction set)" if name == "instruction_set" else name
    return f"{label}: {a} -> {b}"


def differences(base_env: dict, new_env: dict, fields: tuple[str, ...], allow: set[str]) -> list[str]:
    """`field: base -> new` for each of `fields` that differs and is not allowed to (--allow-env)."""
    out = []
    for name in fields:
        if name in allow or (name == "instruction_set" and allow & {"cpu_flags", "cpu"}):
            continue
        a, b = _field(base_env, new_env, name), _field(new_env, base_env, name)
        if a != b:
            out.append(_describe(name, a, b))
    return out


def timing_differences(base_env: dict, new_env: dict, allow: set[str]) -> list[str]:
    return differences(base_env, new_env, TIMING_FIELDS, allow)


def paired_differences(base_env: dict, new_env: dict, allow: set[str]) -> list[str]:
    return differences(base_env, new_env, PAIRED_FIELDS, allow)


def numeric_differences(base_env: dict, new_env: dict, allow: set[str]) -> list[str]:
    return differences(base_env, new_env, NUMERIC_FIELDS, allow)


# What decides whether two runs' values compare, by any of the rules above.
POOLED_FIELDS = tuple(dict.fromkeys((*TIMING_FIELDS, *NUMERIC_FIELDS, "cpu_flags")))


def pooled_env(envs: list[dict]) -> dict:
    """One side's environment when it pools several runs: the first run's, with every field that the runs do
    not share replaced by a value no other environment holds, so that each run of the side, not only the
    first, is checked against the other side (a run on another CPU makes the side's timings incomparable
    wherever it is listed)."""
    out = dict(envs[0])
    for name in POOLED_FIELDS:
        values = [_flags(e[name]) if name == "cpu_flags" and e.get(name) else e.get(name) for e in envs]
        if any(v != values[0] for v in values[1:]):
            distinct = " / ".join(dict.fromkeys(_short(v) for v in values))
            out[name] = [f"(runs differ: {distinct})"] if name == "cpu_flags" else f"runs differ: {distinct}"
    return out


def _short(value) -> str:
    return " ".join(value) if isinstance(value, tuple) else str(value)


def busy_cases(frame: pd.DataFrame, env: dict, side: str) -> dict[tuple[str, str], str]:
    """{(run_id, case_id): why} for the cases whose stored load average exceeded the run's core count."""
    cores = env.get("cpu_count") or 0
    load = frame[frame["metric"] == "loadavg_1m"]
    if not isinstance(cores, int | float) or not cores or load.empty:  # pooled runs of unlike core counts
        return {}
    over = load[load["value"] > cores]
    return {
        (r, c): f"{side} ran with load {v:.1f} above {cores} cores"
        for r, c, v in zip(over["run_id"], over["case_id"], over["value"], strict=True)
    }
