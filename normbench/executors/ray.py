"""The Ray executor: one suite across the cores of a box or the nodes of a cluster.

Details: docs/scale-out.md, "Scale out"."""

from __future__ import annotations

import contextlib
import os
import time
from collections import deque

from normbench.benches import RunContext
from normbench.executors.processes import spread, time_in_processes
from normbench.executors.ray_cluster import (  # noqa: F401  (import_ray: what callers check Ray with)
    FORWARDED_ENV,
    NODE_RESOURCE,
    cap_local_jobs,
    import_ray,
    task_options,
)
from normbench.results.env import fingerprint_of_node
from normbench.runner import RunOutcome, StopAfterCase, run_one, store_finished
from normbench.timing.pages import ENV_VAR, apply_state

_WORKER_CONTEXTS: dict[int, object] = {}
DIED = "died"  # collect()'s status for a case whose timing process died


def run_case_in_worker(case, threads: int, processes: int = 1) -> dict:
    """The Ray task: run one case in this worker process, with a RunContext kept per worker (its memo of the
    training corpus is reused across the cases this worker runs). A CPU timing case is timed in `processes`
    fresh processes started one after another by the task (which has its node to itself), as locally."""
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    state = os.environ.get(ENV_VAR)
    if state:  # the driver's state (worker_env); torch read its part at start
        apply_state(state)
    if spread(case, processes):
        timed = time_in_processes([case], processes, threads=threads, pages=state, say=lambda _: None)
        t = timed[case.case_id]
        return {
            "rows": t.rows,
            "status": t.status,
            "error": t.error,
            "node": node_fingerprint(),
            "died": t.died,
        }
    ctx = _WORKER_CONTEXTS.setdefault(threads, RunContext(threads=threads))
    rows, status, error = run_one(case, ctx)
    return {"rows": rows, "status": status, "error": error, "node": node_fingerprint()}


def node_fingerprint() -> dict:
    """What can differ between the nodes of one cluster, stored per node in the manifest."""
    import ray

    return {"ray_node": ray.get_runtime_context().get_node_id()[:12], **fingerprint_of_node()}


def run_cases_ray(store, cases, ctx, *, session: int, progress=None, say=print, jobs=None, gpus=True):
    """Run `cases` as Ray tasks on the cluster Executor.started connected to; write each part here as it
    finishes. Ctrl-C or SIGTERM cancels what has not finished, keeps everything that has, and returns an
    interrupted outcome; a second one cancels the tasks in flight and stops at once."""
    ray = import_ray()
    outcome = RunOutcome()
    nodes = dict(store.manifest.get("nodes") or {})
    remote = ray.remote(run_case_in_worker)
    queue = deque(cases)
    limit = in_flight_limit(ray, ctx.threads, jobs)
    pending: dict = {}
    with StopAfterCase(say, what="cancelling the cases in flight") as stop:
        try:
            while queue or pending:
                if stop.requested:
                    outcome.interrupted = outcome.write_error is None
                    break
                while queue and len(pending) < limit:
                    case = queue.popleft()
                    options = task_options(case, ctx.threads, gpus)
                    pending[remote.options(**options).remote(case, ctx.threads, ctx.processes)] = case
                    if progress is not None:
                        progress.start_case(case)
                done, _ = ray.wait(list(pending), num_returns=1, timeout=0.2)
                for ref in done:
                    case = pending.pop(ref)
                    rows, status, error, node = collect(ray, ref)
                    if status == DIED:  # a timing process died: failed, not stored (--resume times it)
                        outcome.statuses["failed"] += 1
                        outcome.failures.append((case.short_label, error or ""))
                        if progress is not None:
                            progress.end_case(case, "failed")
                        continue
                    try:
                        if node and nodes.get(node["ray_node"]) != node:  # a node seen for the first time
                            nodes[node["ray_node"]] = node
                            store.update_manifest(nodes=nodes)
                        store_finished(
                            store,
                            case,
                            rows,
                            status,
                            error,
                            session=session,
                            outcome=outcome,
                            progress=progress,
                        )
                    except OSError as exc:  # the disk: stop like the local executor; --resume finishes
                        outcome.write_error = exc
                        stop.requested = True
        finally:  # stopped, or a second signal: nothing keeps running on the cluster
            for ref in pending:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
        outcome.signal = stop.signal
    return outcome


def in_flight_limit(ray, threads: int, jobs: int | None) -> int:
    """Tasks submitted at once: --jobs on a cluster, else twice what the cluster's CPUs can run, so the
    queue stays here (cheap) rather than as thousands of pending Ray tasks."""
    if jobs:
        return jobs
    return 2 * max(1, int(ray.cluster_resources().get("CPU", 1)) // max(1, threads))


def collect(ray, ref) -> tuple[list[dict], str, str | None, dict | None]:
    """A finished task's rows, or a failed case when its worker (or node) died twice."""
    try:
        result = ray.get(ref)
    except ray.exceptions.TaskCancelledError:
        raise
    except ray.exceptions.RayError as exc:
        reason = " ".join(str(exc).split())[:400]
        rows = [{"metric": "case_finished_unix", "unit": "s", "value": time.time()}]
        return rows, "failed", f"worker died: {type(exc).__name__}: {reason}", None
    for row in result["rows"]:  # run_one named the host; the Ray node id is known here
        row["ray_node"] = result["node"]["ray_node"]
    if result.get("died"):
        return [], DIED, result["died"], result["node"]
    return result["rows"], result["status"], result["error"], result["node"]
