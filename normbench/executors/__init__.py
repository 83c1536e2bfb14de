"""Executors run a run's cases and hand each finished case to the store. `local` (the default) runs them
one after another in this process; `ray` spreads them over a Ray cluster (a local one started on demand, or
one joined with --address) while this process stays the only writer of the run folder."""

from __future__ import annotations

EXECUTORS = ("local", "ray")
