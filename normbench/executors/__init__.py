"""Executors run a run's cases and hand each finished case to the store. `local` (the default) runs them
one after another in this process; `ray` spreads them over a Ray cluster (a local one started on demand, or
one joined with --address) while this process stays the only writer of the run folder."""

from __future__ import annotations

import contextlib

from normbench.executors.local import run_cases
from normbench.executors.ray import run_cases_ray
from normbench.executors.ray_cluster import started_ray

EXECUTORS = ("local", "ray")


class Executor:
    """Which executor runs the session's cases (--executor, --address, --jobs)."""

    def __init__(self, name: str, address: str | None, jobs: int | None):
        self.name, self.address, self.jobs = name, address, jobs
        self.gpus = True  # whether a case on CUDA asks Ray for a GPU (none when no node has one)

    @contextlib.contextmanager
    def started(self, cases, threads: int, say):
        """Ray: join or start the cluster and check that it can run every case, before anything is
        written; shut it down at the end. The local executor has nothing to start."""
        if self.name != "ray":
            yield self
            return

        with started_ray(self.address, self.jobs, cases, threads, say) as gpus:
            self.gpus = gpus
            yield self

    def run(self, store, todo, ctx, **kw):
        if self.name == "ray":
            return run_cases_ray(
                store, todo, ctx, jobs=self.jobs if self.address else None, gpus=self.gpus, **kw
            )

        return run_cases(store, todo, ctx, **kw)
