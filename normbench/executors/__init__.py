"""Executors run a run's cases and hand each finished case to the store. `local` (the default) runs them
one after another in this process; `ray` spreads them over a Ray cluster (a local one started on demand, or
one joined with --address) while this process stays the only writer of the run folder."""

from __future__ import annotations

EXECUTORS = ("local", "ray")


class Executor:
    """Which executor runs the session's cases (--executor, --address, --jobs)."""

    def __init__(self, name: str, address: str | None, jobs: int | None):
        self.name, self.address, self.jobs = name, address, jobs

    def run(self, store, todo, ctx, **kw):
        if self.name == "ray":
            from normbench.executors.ray import run_cases_ray

            return run_cases_ray(store, todo, ctx, address=self.address, jobs=self.jobs, **kw)
        from normbench.runner import run_cases

        return run_cases(store, todo, ctx, **kw)
