"""Samples: what every timer returns (raw per-call times, never a statistic)."""

from __future__ import annotations

from dataclasses import dataclass, field

# Samples.extra counters that add up over the rounds of measure_interleaved
SUMMED_EXTRAS = ("minor_faults", "fault_samples", "timed_calls")


@dataclass
class Samples:
    """Raw samples of one timed callable. times[i] is the mean time of one call within sample i
    (sample i ran `inner` calls back to back)."""

    times: list[float]
    inner: int
    timer: str
    warmup: int
    extra: dict = field(default_factory=dict)
