"""The Ray executor: deterministic benches (the encoder-decoder's too) give bit-identical rows under the local
and the Ray executor, timing cases in k fresh processes rows of the local form;
SIGTERM keeps every finished case and --resume finishes the rest; on a local 3-node cluster cases spread over
nodes, a timing case never overlaps another case on its node, a killed worker is retried once and then stored
as failed; a missing Ray is one line and exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import make_child_env, tiny_latency_suite

# Ray's tests start local clusters over every core: under pytest-xdist they share one worker, in turn.
pytestmark = pytest.mark.xdist_group("ray")

ray = pytest.importorskip("ray")

TINY_MODEL = """[bench.sweep]
placement = ["post", "pre"]
[bench.params]
depth = 2
d = 16
heads = 2
ffn = 32
seq = 16
batch = 4
"""

DETERMINISTIC = f"""
name = "det"
threads = 1
[[bench]]
kind = "jacobian"
norms = ["layernorm", "rmsnorm"]
[bench.sweep]
d = [8, 32]
[[bench]]
kind = "init"
norms = ["layernorm"]
{TINY_MODEL}batches = 2
jacobian_tokens = 4
[[bench]]
kind = "stability"
norms = ["layernorm"]
{TINY_MODEL}steps = 6
every = 3
eval_batches = 2
[[bench]]
kind = "encdec"
norms = ["layernorm"]
[bench.sweep]
placement = ["post", "deepnorm"]
[bench.params]
init = "deepnorm"
task = "copy"
task_words = 8
min_len = 2
max_len = 6
depth = 2
d = 16
ffn = 32
batch = 4
steps = 6
every = 3
eval_batches = 2
"""

MIXED = """
name = "mixed"
threads = 1
pages = "base"
[[bench]]
kind = "latency"
norms = ["layernorm:module", "rmsnorm:module"]
[bench.sweep]
d = [16, 32, 64]
[bench.params]
tokens = 64
samples = 5
min_sample_s = 0.02
copy_probe = false
[[bench]]
kind = "jacobian"
norms = ["layernorm", "rmsnorm", "dyt"]
[bench.sweep]
d = [64, 128, 256]
"""

# one thread: a case asking for more CPUs than a 1-CPU node has could never be scheduled
DYING = "threads = 1\n" + tiny_latency_suite(name="dying", norms='["dies:once", "dies:always"]')


def read_run(results: Path) -> pd.DataFrame:
    from normbench.results.store import read_runs

    frame, _ = read_runs(results, ["latest"])
    return frame


WHERE_AND_WHEN = {"run_id", "session", "node", "ray_node", "value"}


def values(frame: pd.DataFrame) -> pd.DataFrame:
    """The measured values of deterministic benches, keyed by every other column; times (unit s) and the load
    average are not deterministic and are left out."""
    keep = frame[(frame["unit"] != "s") & (frame["metric"] != "loadavg_1m")]
    keys = [c for c in keep.columns if c not in WHERE_AND_WHEN]
    return keep.sort_values(keys, na_position="first")[keys + ["value"]].reset_index(drop=True)


def test_deterministic_benches_are_bit_identical_under_ray(tmp_path, normbench_proc):
    """One Ray start for every deterministic kind: the Jacobian, init, and decoder and encoder-decoder
    training (its encoder's update and the decoder's update through the encoder among the values)."""
    (tmp_path / "det.toml").write_text(DETERMINISTIC)
    local = normbench_proc("run", "det.toml", "--quiet", "-r", "local")
    assert local.returncode == 0, local.stderr
    remote = normbench_proc(
        "run", "det.toml", "--quiet", "-r", "ray", "--executor", "ray", "--jobs", "2", timeout=600
    )
    assert remote.returncode == 0, remote.stderr
    a, b = values(read_run(tmp_path / "local")), values(read_run(tmp_path / "ray"))
    assert len(a) > 100 and a["case_id"].nunique() == 10
    assert {"enc_update", "dec_update_via_enc"} <= set(a["metric"])
    pd.testing.assert_frame_equal(a, b, check_exact=True)


SPREAD = """
name = "spread"
threads = 1
[[bench]]
kind = "latency"
norms = ["layernorm:module", "rmsnorm:module"]
[bench.params]
tokens = 8
d = 16
samples = 6
warmup_calls = 0
min_sample_s = 1e-4
min_run_s = 0
[[bench]]
kind = "jacobian"
norms = ["layernorm"]
[bench.sweep]
d = [8, 32]
"""


def test_timing_cases_in_processes_have_the_same_form_under_ray(tmp_path, normbench_proc):
    """--processes 2: a Ray task times its case in 2 fresh processes; the rows have the local run's form
    (a process index beside the values over processes) and the deterministic cases stay bit-identical."""
    (tmp_path / "spread.toml").write_text(SPREAD)
    args = ("run", "spread.toml", "--quiet", "--processes", "2")
    local = normbench_proc(*args, "-r", "local")
    assert local.returncode == 0, local.stderr
    remote = normbench_proc(*args, "-r", "ray", "--executor", "ray", "--jobs", "2", timeout=600)
    assert remote.returncode == 0, remote.stderr
    a, b = read_run(tmp_path / "local"), read_run(tmp_path / "ray")

    def form(frame):
        timed = frame[frame["bench"] == "latency"]
        return sorted(set(zip(timed["case_id"], timed["metric"], timed["process"].fillna(-1), strict=True)))

    assert form(a) == form(b) and {0, 1} <= {p for _, _, p in form(a)}
    det = lambda f: values(f[f["bench"] == "jacobian"])  # noqa: E731
    pd.testing.assert_frame_equal(det(a), det(b), check_exact=True)


@pytest.fixture(scope="module")
def die_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("die")


@pytest.fixture(scope="module")
def cluster(die_dir):
    """Three 1-CPU Ray nodes on this machine, each offering one normbench_node unit. Their workers see the
    environment of this process (not the driver's): the test plugins' folder and where they leave markers."""
    from conftest import PLUGINS_DIR, REPO
    from ray.cluster_utils import Cluster

    patch = pytest.MonkeyPatch()
    patch.setenv("PYTHONPATH", f"{REPO}:{PLUGINS_DIR}")
    patch.setenv("NB_DIE_DIR", str(die_dir))
    patch.setenv("RAY_AUTH_MODE", "disabled")
    # Every node, and the normbench driver that joins them (it inherits this environment), on loopback only.
    patch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

    c = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "resources": {"normbench_node": 1}, "include_dashboard": False},
    )
    for _ in range(2):
        c.add_node(num_cpus=1, resources={"normbench_node": 1})
    c.wait_for_nodes()
    yield c
    c.shutdown()
    patch.undo()


def test_cluster_spreads_cases_and_timing_cases_run_alone(cluster, tmp_path, normbench_proc):
    (tmp_path / "mixed.toml").write_text(MIXED)
    done = normbench_proc(
        "run", "mixed.toml", "--quiet", "--executor", "ray", "--address", cluster.address, timeout=600
    )
    assert done.returncode == 0, done.stderr
    frame = read_run(tmp_path / "results")
    spans = frame[frame["metric"].isin(["case_started_unix", "case_finished_unix"])].pivot_table(
        index=["case_id", "bench", "ray_node"], columns="metric", values="value"
    )
    spans = spans.reset_index()
    assert len(spans) == 15 and spans["ray_node"].nunique() >= 2  # spread over the nodes
    for _, timed in spans[spans["bench"] == "latency"].iterrows():
        same_node = spans[(spans["ray_node"] == timed["ray_node"]) & (spans["case_id"] != timed["case_id"])]
        overlap = (same_node["case_started_unix"] < timed["case_finished_unix"]) & (
            same_node["case_finished_unix"] > timed["case_started_unix"]
        )
        assert not overlap.any(), f"a case overlapped timing case {timed['case_id']} on its node"
    # the driver's page state reached every worker (timing/pages.py's worker_env, the only way it travels)
    assert set(frame.loc[frame["pages"].notna(), "pages"]) == {"base"}


def test_killed_worker_is_retried_once_then_failed(cluster, die_dir, tmp_path, normbench_proc):
    (tmp_path / "dying.toml").write_text(DYING)
    done = normbench_proc(
        "run",
        "dying.toml",
        "--quiet",
        "--executor",
        "ray",
        "--address",
        cluster.address,
        extra_env={
            "NORMBENCH_PLUGINS": "ray_dying_norms"
        },  # forwarded to the cluster's workers by the executor
        timeout=600,
    )
    assert done.returncode == 1, done.stderr  # one case failed
    frame = read_run(tmp_path / "results")
    status = frame.drop_duplicates("case_id").set_index("impl")["status"]
    assert status["once"] == "ok"  # died once, retried, then ran
    assert status["always"] == "failed"
    reason = frame[frame["impl"] == "always"]["error"].iloc[0]
    assert reason.startswith("worker died:")
    assert (die_dir / "died-16").exists()  # the first attempt did die


def test_missing_ray_is_one_line_and_nothing_is_created(tmp_path):
    fake = tmp_path / "noray" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("No module named ray (test)")\n')
    (tmp_path / "det.toml").write_text(DETERMINISTIC)
    env = make_child_env()
    env["PYTHONPATH"] = f"{fake.parent}:{env['PYTHONPATH']}"
    done = subprocess.run(
        [sys.executable, "-m", "normbench", "run", "det.toml", "--executor", "ray"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "pip install 'normbench[ray]'" in done.stderr
    assert not (tmp_path / "results").exists()


def test_sigterm_cancels_in_flight_keeps_finished_and_resume_finishes(tmp_path, normbench_proc):
    """SIGTERM under --executor ray: the run stops (exit 143), every finished case is on disk, and --resume
    (here with the local executor) runs only the rest: each planned case stored exactly once."""
    import signal

    from normbench.results.store import RunStore

    proc = start_ray_run_after_first_case(tmp_path, make_child_env())
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 143, stderr
    assert "--resume" in stderr and "Traceback" not in stderr
    (run_id,) = [p.name for p in (tmp_path / "results").iterdir()]
    store = RunStore.open(tmp_path / "results", run_id)
    finished_first = store.finished_case_ids()
    assert 1 <= len(finished_first) < len(store.planned_case_ids())
    resumed = normbench_proc("run", "--resume", run_id, "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    frame = RunStore.open(tmp_path / "results", run_id).read()
    per_case = frame.drop_duplicates(["case_id", "session"]).groupby("case_id")["session"].nunique()
    assert set(frame["case_id"]) == store.planned_case_ids() and (per_case == 1).all()


def start_ray_run_after_first_case(tmp_path, env):
    """A Ray run of a longer deterministic suite, returned once its first case is on disk (to be signalled)."""
    import time

    suite = DETERMINISTIC.replace("steps = 6", "steps = 60").replace(
        '"post", "pre"]', '"post", "pre", "deepnorm"]'
    )
    (tmp_path / "det.toml").write_text(suite)
    proc = subprocess.Popen(
        [sys.executable, "-m", "normbench", "run", "det.toml", "--quiet", "--executor", "ray", "--jobs", "2"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 300
    while time.time() < deadline and not list((tmp_path / "results").glob("*/parts/*.parquet")):
        assert proc.poll() is None, proc.communicate()[1]  # it ended before its first case: say why
        time.sleep(0.2)
    return proc
