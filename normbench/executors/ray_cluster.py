"""Getting a Ray cluster for a run, before any run folder exists: import Ray (a broken install is one line),
join a cluster within a bounded time (a TCP probe first, then `ray.init` under a time limit) or start a local
one of at most this machine's cores, and check that some node can run every case, so that no task waits
forever for resources nobody has. Signals during start-up are ours, not Ray's: `ray.init` installs a SIGTERM
handler that exits silently, which is put back at once."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
from collections.abc import Iterator

from normbench.benches import get_bench
from normbench.core.errors import NormbenchError
from normbench.core.settings import env_setting
from normbench.runner import StopAfterCase
from normbench.timing.pages import worker_env

NODE_RESOURCE = "normbench_node"
PACKED_SHARE = 0.001  # a case that does not time: up to 1000 of them share a node
INSTALL_HINT = "pip install 'normbench[ray]'  (or: pip install ray)"
FORWARDED_ENV = (
    "NORMBENCH_PLUGINS",
    "NORMBENCH_DEBUG",
    "NORMBENCH_ALLOW_OVERRIDE",
    "THP_MEM_ALLOC_ENABLE",  # the page state's torch part; the state itself: timing/pages.py's worker_env
)
CONNECT_TIMEOUT_S = 10.0  # the TCP probe of --address
# ray.init against --address as a whole: a reachable port that is not a Ray head makes Ray retry for ~14
# minutes (20 tries of ~41 s, each a C++ wait); NORMBENCH_RAY_TIMEOUT_S lengthens it for a slow cluster.
# The limit is checked when Ray's Python code runs again, after its current C++ wait, which _init bounds.
INIT_TIMEOUT_S = 60.0


def init_timeout() -> float:
    text = env_setting("NORMBENCH_RAY_TIMEOUT_S")
    if text is None:  # unset, empty or blank
        return INIT_TIMEOUT_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < 1e7:
        raise NormbenchError(f"NORMBENCH_RAY_TIMEOUT_S={text!r}: expected seconds, a number > 0")
    return seconds


WORKER_MB = 350  # what one idle Ray worker process holds with torch imported (measured, Ray 2.x)


class Interrupted(Exception):
    """SIGINT/SIGTERM arrived before the first case: nothing was run."""

    def __init__(self, signum: int):
        self.signal = signal.Signals(signum)
        super().__init__(f"{self.signal.name} while starting Ray: nothing was run")


# Ray's C++ core installs absl's failure-signal handler in the driver, SIGTERM among its signals: a SIGTERM
# while the driver connects (a window of ~0.5 s of a local start) printed a C++ stack dump and aborted (exit
# 134) instead of reaching normbench's guard (exit 143, one line). Read once, when Ray is imported; only this
# process sees it (removed again at once), so Ray's workers keep their crash dumps.
NO_FAILURE_HANDLER = "RAY_DISABLE_FAILURE_SIGNAL_HANDLER"


def bound_ray_waits(address: str | None) -> None:
    """Before Ray is imported (it reads its RAY_* settings then): when joining `address`, bound Ray's own C++
    connect waits (defaults 30 s and 5 s) by NORMBENCH_RAY_TIMEOUT_S, so a port that is no Ray head is given
    up near the limit (measured: 44 s for a 5 s limit without, ~20 s with). A local start keeps Ray's own;
    a value the user set is kept."""
    seconds = init_timeout()  # read on both paths: a bad value is refused for a local start too
    if not address or "ray" in sys.modules:
        return
    os.environ.setdefault("RAY_py_gcs_connect_timeout_s", f"{max(1, min(30, round(seconds)))}")
    os.environ.setdefault("RAY_gcs_rpc_server_connect_timeout_s", f"{max(1, min(5, round(seconds)))}")


def import_ray():
    if "ray" not in sys.modules and NO_FAILURE_HANDLER not in os.environ:
        os.environ[NO_FAILURE_HANDLER] = "1"
        try:
            return _import_ray()
        finally:
            os.environ.pop(NO_FAILURE_HANDLER, None)
    return _import_ray()


def _import_ray():
    try:
        import ray
    except ImportError as exc:
        raise NormbenchError(
            f"--executor ray needs Ray, which is not installed ({exc}): {INSTALL_HINT}"
        ) from None
    except Exception as exc:  # a broken install: a missing shared library, a version clash
        reason = " ".join(str(exc).split())[:300]
        raise NormbenchError(
            f"--executor ray: Ray is installed but fails to import ({type(exc).__name__}: {reason}); "
            f"reinstall it: {INSTALL_HINT}"
        ) from None
    return ray


def cap_local_jobs(jobs: int | None, address: str | None, say) -> int | None:
    """--jobs of a local Ray is its CPU count: above this machine's cores every extra worker only costs
    memory (~WORKER_MB each) and makes cases compete for cores; capped, with a warning."""
    cores = os.cpu_count() or 1
    if address or jobs is None or jobs <= cores:
        return jobs
    say(
        f"warning: --jobs {jobs} is more than this machine's {cores} cores (each Ray worker is a process of "
        f"~{WORKER_MB} MB, and cases would compete for the cores); using {cores}"
    )
    return cores


def check_reachable(address: str) -> None:
    """HOST:PORT or ray://HOST:PORT must accept a TCP connection within CONNECT_TIMEOUT_S."""
    target = address.removeprefix("ray://")
    if address == "auto" or "://" in target:
        return
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise NormbenchError(f"--address {address}: expected auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise NormbenchError(
            f"--address {address}: cannot reach {host}:{port} within {CONNECT_TIMEOUT_S:g} s ({reason}); "
            "nothing was run"
        ) from None


class StartTimeout(BaseException):
    """A BaseException: Ray's connect loop retries on any Exception, and this must end it."""


@contextlib.contextmanager
def time_limit(seconds: float, what: str) -> Iterator[None]:
    """StartTimeout in the main thread after `seconds` (SIGALRM; Ray's connect loop is Python around
    blocking C++ calls)."""

    def expire(signum, frame):
        raise StartTimeout(what)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def connect(ray, address: str | None, jobs: int | None) -> bool:
    """Join the cluster at `address`, or start a local one with `jobs` CPUs (default: every core) and one
    normbench_node unit. Returns True when this process started Ray (and so must shut it down)."""
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a local, loopback-only cluster of one user
    quiet = {"log_to_driver": False, "configure_logging": False}
    # Workers on a cluster do not inherit this process's environment: pass on what changes what they run.
    forwarded = {k: os.environ[k] for k in FORWARDED_ENV if env_setting(k) is not None} | worker_env()
    if forwarded:
        quiet["runtime_env"] = {"env_vars": forwarded}
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return _init(ray, address, jobs, quiet)
    except SystemExit as exc:  # Ray's own SIGTERM handler, in force while ray.init ran
        if exc.code == signal.SIGTERM:
            raise Interrupted(signal.SIGTERM) from None
        raise
    finally:
        for s, handler in handlers.items():  # ray.init replaced SIGTERM's with one that exits silently
            signal.signal(s, handler)


def _init(ray, address: str | None, jobs: int | None, quiet: dict) -> bool:
    if address:
        check_reachable(address)
        try:
            seconds = init_timeout()
            with time_limit(seconds, f"no answer within {seconds:g} s (NORMBENCH_RAY_TIMEOUT_S)"):
                ray.init(address=address, **quiet)
        except (KeyboardInterrupt, SystemExit, NormbenchError):
            raise
        except BaseException as exc:
            with contextlib.suppress(Exception):
                ray.shutdown()
            reason = " ".join(str(exc).split())[:300] or type(exc).__name__
            raise NormbenchError(f"--address {address}: cannot join the Ray cluster: {reason}") from None
        if NODE_RESOURCE not in ray.cluster_resources():
            ray.shutdown()
            raise NormbenchError(
                f"the Ray cluster at {address} has no {NODE_RESOURCE!r} resource: start each node with "
                f"`ray start ... --resources='{{\"{NODE_RESOURCE}\": 1}}'` (docs/scale-out.md)"
            )
        return False
    # A local Ray of one node talks over loopback only: without this Ray names the node by the address
    # of the machine's outward interface and connects to itself through it.
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    # a local start is bounded only when NORMBENCH_RAY_TIMEOUT_S is set: a loaded machine may start slowly
    local = env_setting("NORMBENCH_RAY_TIMEOUT_S") is not None
    seconds = init_timeout()
    limit = time_limit(seconds, f"a local Ray did not start within {seconds:g} s (NORMBENCH_RAY_TIMEOUT_S)")
    try:
        with limit if local else contextlib.nullcontext():
            ray.init(
                address="local",  # always a new local Ray, never one that RAY_ADDRESS or a running cluster names
                num_cpus=jobs or os.cpu_count(),
                resources={NODE_RESOURCE: 1},
                include_dashboard=False,
                _node_ip_address="127.0.0.1",
                **quiet,
            )
    except StartTimeout as exc:
        with contextlib.suppress(Exception):
            ray.shutdown()
        raise NormbenchError(str(exc)) from None
    return True


def node_resources(ray) -> list[dict]:
    return [n.get("Resources", {}) for n in ray.nodes() if n.get("Alive")]


def check_feasible(ray, cases, threads: int, gpus: bool) -> None:
    """Refuse, naming the case and the numbers, a case no node of the cluster can ever run."""
    nodes = node_resources(ray)
    seen = set()
    for case in cases:
        opts = task_options(case, threads, gpus=gpus)
        need = (opts["num_cpus"], opts.get("num_gpus", 0), opts["resources"][NODE_RESOURCE])
        if need in seen:
            continue
        seen.add(need)
        cpus, n_gpus, share = need
        if any(
            r.get("CPU", 0) >= cpus and r.get("GPU", 0) >= n_gpus and r.get(NODE_RESOURCE, 0) >= share
            for r in nodes
        ):
            continue
        most = max((r.get("CPU", 0) for r in nodes), default=0)
        gpu_text = " and a GPU" if n_gpus else ""
        raise NormbenchError(
            f"case {case.short_label} asks Ray for {cpus:g} CPUs (its threads){gpu_text}, more than any node "
            f"of the cluster offers (the largest has {most:g} CPUs): give --threads {max(1, int(most))} (or "
            "lower the suite's `threads`), or add a bigger node; nothing was run"
        )


@contextlib.contextmanager
def started_ray(address: str | None, jobs: int | None, cases, threads: int, say) -> Iterator[bool]:
    """Ray connected and checked for the cases; yields whether a case on CUDA can get a GPU (without any
    GPU in the cluster such a case asks for none and the bench records it skipped, as the local executor
    does). A signal during start-up raises Interrupted; Ray is shut down at the end if started here."""
    bound_ray_waits(address)
    ray = import_ray()
    started_here = False
    try:
        with StopAfterCase(say, what="Ray's start-up") as stop:
            started_here = connect(ray, address, jobs)
        if stop.requested:
            raise Interrupted(stop.signal)
        gpus = any(r.get("GPU", 0) >= 1 for r in node_resources(ray))
        check_feasible(ray, cases, threads, gpus)
        yield gpus
    finally:
        if started_here or ray.is_initialized():
            # the run's outcome is already recorded: a signal now only shortens the shutdown
            with StopAfterCase(say, what="Ray's shutdown"), contextlib.suppress(KeyboardInterrupt):
                try:
                    ray.shutdown()
                finally:  # Ray's C++ shutdown leaves SIGTERM at SIG_DFL behind Python's back: re-arm
                    for s in (signal.SIGINT, signal.SIGTERM):
                        signal.signal(s, signal.getsignal(s))


def task_options(case, threads: int, gpus: bool = True) -> dict:
    """What one case asks Ray for; a case on CUDA asks for a GPU only when the cluster has one (without,
    the bench itself records it skipped, as under the local executor)."""
    options = {
        "num_cpus": threads,
        "resources": {NODE_RESOURCE: 1.0 if get_bench(case.kind).exclusive_node else PACKED_SHARE},
        "max_retries": 1,
        "retry_exceptions": False,  # exceptions are results (run_one catches them); only deaths retry
    }
    if case.params.get("device") == "cuda" and gpus:
        options["num_gpus"] = 1
    return options
