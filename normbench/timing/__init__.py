"""Timers. Each returns raw per-call samples (seconds); statistics are computed from them later.

cpu.CpuTimer    time.perf_counter_ns around a calibrated inner loop
cuda.CudaTimer  CUDA events per sample, L2 flush between samples, optional CUDA-graph mode
cache           the flush buffers of the cold-cache mode (CPU last-level cache, GPU L2)
process         the allocator policy that makes CPU timings independent of process state; page faults
pages           huge or base pages: chosen once per process before torch allocates, measured per case
"""

from __future__ import annotations

from normbench.timing.cache import flush_buffer
from normbench.timing.cpu import CpuTimer
from normbench.timing.cuda import CudaTimer
from normbench.timing.samples import SUMMED_EXTRAS, Samples

__all__ = ["SUMMED_EXTRAS", "Samples", "measure_interleaved", "timer_for"]


def timer_for(device: str, *, cache: str = "warm", graph: bool = False, **options):
    """The timer for a device and cache state. cache="cold" flushes the last-level cache (CPU) or L2 (GPU)
    before every sample and times one call per sample; graph=True (CUDA only) replays CUDA graphs."""
    if cache not in ("cold", "warm"):
        raise ValueError(f"cache must be 'cold' or 'warm', not {cache!r}")
    if device == "cpu":
        if graph:
            raise ValueError("CUDA-graph timing needs device = cuda")
        if cache == "warm":
            return CpuTimer(**options)
        options.pop("min_run_s", None)  # one call per sample: nothing to raise
        timer = CpuTimer(between=flush_buffer("cpu"), inner=1, **options)
        timer.name = "cpu-perf_counter+llc-flush"
        return timer
    if device == "cuda":
        options.pop("min_run_s", None)  # a CPU-side floor: CUDA events time each sample on the device
        return CudaTimer(cache=cache, graph=graph, **options)
    raise ValueError(f"no timer for device {device!r}")


def measure_interleaved(timer, fns: dict, rounds: int, seed: int | None = None) -> dict:
    """Time several callables in paired rounds, each round taking a share of timer.samples samples of every
    callable in turn, so that drifting load falls on all of them alike; with `seed` the order within a round
    is shuffled. A value of fns may be a list of callables, one per placement (round r times placement r %
    len). Returns name -> Samples, raw times in order. Warm-up, calibration and the extras:
    docs/methodology.md, "Paired rounds"."""
    import copy
    import random

    rounds = max(1, min(rounds, timer.samples))
    shares = [timer.samples // rounds + (1 if r < timer.samples % rounds else 0) for r in range(rounds)]
    timers = {name: copy.copy(timer) for name in fns}
    for t in timers.values():
        t.planned_samples = timer.samples  # a floor on the whole run spreads over all rounds' samples
    rng = random.Random(seed) if seed is not None else None
    merged: dict[str, Samples] = {}
    for r, share in enumerate(shares):
        names = list(fns)
        if rng is not None:
            rng.shuffle(names)
        for name in names:
            fn = fns[name]
            if isinstance(fn, list | tuple):
                fn = fn[r % len(fn)]
            t = timers[name]
            t.samples = share
            s = t.measure(fn)
            if name not in merged:
                merged[name] = Samples(list(s.times), s.inner, s.timer, s.warmup, dict(s.extra))
            else:
                merged[name].times.extend(s.times)
                for key, value in s.extra.items():
                    if key in SUMMED_EXTRAS:
                        merged[name].extra[key] = merged[name].extra.get(key, 0) + value
                    else:
                        merged[name].extra[key] = value
            if r == 0:
                t.warmup = min(t.warmup, 1)
                t.inner = s.inner
                if hasattr(t, "quiet_calls"):  # the heap has settled in round 0: a short check will do
                    t.quiet_calls, t.settle_max = 1, 3
    for samples in merged.values():
        samples.extra["round_sizes"] = shares
    return merged
