"""The Ray executor: one suite across the cores of a box or the nodes of a cluster.

Design (docs/scale-out.md):
- Every case is one Ray task asking for `num_cpus = threads` (and `num_gpus = 1` on CUDA). Tasks return
  rows; this process writes each part as its case finishes, through the same RunStore (atomic parts,
  manifest, lock), so --resume, --only, --shard, report and compare work unchanged.
- Timing cases (benches with `exclusive_node = True`: latency, block) must never share a node with another
  case while they are timed. Each node offers one unit of the custom resource `normbench_node`; a timing
  case takes the whole unit, every other case takes 1/1000 of it, so a timing case runs alone on its node and
  the others pack freely. A local Ray started here declares the resource; cluster nodes declare it with
  `ray start ... --resources='{"normbench_node": 1}'`.
- A task whose worker or node dies is retried once by Ray (max_retries=1), then stored `failed` with
  "worker died: ...". An exception inside a case never reaches Ray: run_one stores it as today.
- Seeds come from case parameters only, so deterministic benches give the same rows under any executor
  and any scheduling order."""

from __future__ import annotations

import os
import time
from collections import deque

from normbench.core.errors import NormbenchError

NODE_RESOURCE = "normbench_node"
PACKED_SHARE = 0.001  # a case that does not time: up to 1000 of them share a node
FORWARDED_ENV = ("NORMBENCH_PLUGINS", "NORMBENCH_DEBUG")
INSTALL_HINT = "pip install 'normbench[ray]'  (or: pip install ray)"


def import_ray():
    try:
        import ray
    except ImportError as exc:
        raise NormbenchError(
            f"--executor ray needs Ray, which is not installed ({exc}): {INSTALL_HINT}"
        ) from None
    return ray


def connect(ray, address: str | None, jobs: int | None) -> bool:
    """Join the cluster at `address`, or start a local one with `jobs` CPUs (default: every core) and one
    normbench_node unit. Returns True when this process started Ray (and so must shut it down)."""
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a local, loopback-only cluster of one user
    quiet = {"log_to_driver": False, "configure_logging": False}
    # Workers on a cluster do not inherit this process's environment: pass on what changes what they run.
    forwarded = {k: os.environ[k] for k in FORWARDED_ENV if os.environ.get(k)}
    if forwarded:
        quiet["runtime_env"] = {"env_vars": forwarded}
    if address:
        try:
            ray.init(address=address, **quiet)
        except Exception as exc:
            raise NormbenchError(f"--address {address}: cannot join the Ray cluster: {exc}") from None
        if NODE_RESOURCE not in ray.cluster_resources():
            ray.shutdown()
            raise NormbenchError(
                f"the Ray cluster at {address} has no {NODE_RESOURCE!r} resource: start each node with "
                f"`ray start ... --resources='{{\"{NODE_RESOURCE}\": 1}}'` (docs/scale-out.md)"
            )
        return False
    # A local Ray of one node talks over loopback only: without this Ray names the node by the address of
    # the machine's outward interface and connects to itself through it.
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    ray.init(
        address="local",  # always a new local Ray, never one that RAY_ADDRESS or a running cluster names
        num_cpus=jobs or os.cpu_count(),
        resources={NODE_RESOURCE: 1},
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        **quiet,
    )
    return True


def task_options(case, threads: int) -> dict:
    from normbench.benches import get_bench

    options = {
        "num_cpus": threads,
        "resources": {NODE_RESOURCE: 1.0 if get_bench(case.kind).exclusive_node else PACKED_SHARE},
        "max_retries": 1,
        "retry_exceptions": False,  # exceptions are results (run_one catches them); only deaths retry
    }
    if case.params.get("device") == "cuda":
        options["num_gpus"] = 1
    return options


_WORKER_CONTEXTS: dict[int, object] = {}


def run_case_in_worker(case, threads: int) -> dict:
    """The Ray task: run one case in this worker process, with a RunContext kept per worker (its memo of the
    training corpus is reused across the cases this worker runs)."""
    import torch

    from normbench.benches import RunContext
    from normbench.runner import run_one

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    ctx = _WORKER_CONTEXTS.setdefault(threads, RunContext(threads=threads))
    rows, status, error = run_one(case, ctx)
    return {"rows": rows, "status": status, "error": error, "node": node_fingerprint()}


def node_fingerprint() -> dict:
    """What can differ between the nodes of one cluster, stored per node in the manifest."""
    import ray

    from normbench.results.env import fingerprint_of_node

    return {"ray_node": ray.get_runtime_context().get_node_id()[:12], **fingerprint_of_node()}


def run_cases_ray(store, cases, ctx, *, session: int, progress=None, say=print, address=None, jobs=None):
    """Run `cases` as Ray tasks; write each part here as it finishes. Ctrl-C or SIGTERM cancels what has
    not finished, keeps everything that has, and returns an interrupted outcome."""
    from normbench.runner import RunOutcome, StopAfterCase, store_finished

    ray = import_ray()
    started_here = connect(ray, address, jobs)
    outcome = RunOutcome()
    nodes = dict(store.manifest.get("nodes") or {})
    try:
        remote = ray.remote(run_case_in_worker)
        queue = deque(cases)
        limit = in_flight_limit(ray, ctx.threads, jobs if address else None)
        pending: dict = {}
        with StopAfterCase(say, what="cancelling the cases in flight") as stop:
            while queue or pending:
                if stop.requested:
                    outcome.interrupted = outcome.write_error is None
                    for ref in pending:
                        ray.cancel(ref, force=True)
                    break
                while queue and len(pending) < limit:
                    case = queue.popleft()
                    pending[remote.options(**task_options(case, ctx.threads)).remote(case, ctx.threads)] = (
                        case
                    )
                    if progress is not None:
                        progress.start_case(case)
                done, _ = ray.wait(list(pending), num_returns=1, timeout=0.2)
                for ref in done:
                    case = pending.pop(ref)
                    rows, status, error, node = collect(ray, ref)
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
            outcome.signal = stop.signal
    finally:
        if started_here:
            ray.shutdown()
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
    return result["rows"], result["status"], result["error"], result["node"]
