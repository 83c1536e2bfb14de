"""`make bench`/`bench-compare`'s machinery: the micro-benchmarks skip every torch.compile'd implementation,
and a regression ends in one `bench-compare: FAIL` line with exit 1 (no traceback), on a stepping clock."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# A benchmark file timed by a fake clock that advances one millisecond per reading (3 ms with the planted
# slowdown): every round lasts exactly that, so the comparison's outcome does not depend on the machine.
FAKE = """
import os
_now = [0.0]

def clock():
    _now[0] += 1e-3 * int(os.environ.get("FAKE_SLOWDOWN", "1"))
    return _now[0]

def test_step(benchmark):
    benchmark(lambda: None)
"""


def _pytest(folder: Path, *args: str, slowdown: int = 1) -> subprocess.CompletedProcess:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")},  # a plain pytest child
        "PYTHONPATH": os.pathsep.join([str(TESTS), str(folder)]),
        "FAKE_SLOWDOWN": str(slowdown),
    }
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "_bench_summary", "-p", "no:cacheprovider"]
    cmd += ["--rootdir", str(folder), "-c", os.devnull, "test_fake.py", "--benchmark-enable"]
    cmd += [
        "--benchmark-timer=test_fake.clock",
        "--benchmark-calibration-precision=1",
        "--benchmark-min-time=0",
    ]
    cmd += [f"--benchmark-storage={folder / 'store'}", *args]
    return subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def saved(tmp_path):
    (tmp_path / "test_fake.py").write_text(FAKE)
    done = _pytest(tmp_path, "--benchmark-autosave", "--benchmark-max-time=0.01", "--benchmark-min-rounds=5")
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp_path


def test_a_planted_regression_is_one_line_and_exit_1(saved):
    done = _pytest(
        saved, "--benchmark-compare", "--benchmark-compare-fail=median:25%", "--benchmark-max-time=0.01",
        "--benchmark-min-rounds=5", slowdown=3,
    )  # fmt: skip
    text = done.stdout + done.stderr
    lines = [ln for ln in text.splitlines() if ln.startswith("bench-compare:")]
    assert done.returncode == 1, text
    assert lines == [
        "bench-compare: FAIL 1/1 slower than the saved run (median:25%): test_step (median +200.0%)"
    ]
    assert "Traceback" not in text and "PerformanceRegression" not in text


def test_unchanged_code_is_one_ok_line_and_exit_0(saved):
    done = _pytest(
        saved, "--benchmark-compare", "--benchmark-compare-fail=median:25%", "--benchmark-max-time=0.01",
        "--benchmark-min-rounds=5",
    )  # fmt: skip
    text = done.stdout + done.stderr
    assert done.returncode == 0, text
    assert "bench-compare: OK 0/1 slower than the saved run (median:25%)" in text.splitlines()


def test_the_micro_benchmarks_run_no_compiled_implementation():
    """The old filter (names starting with 'compile') kept batchnorm's train_compiled and eval_compiled."""
    import torch

    sys.path.insert(0, str(TESTS))
    from test_microbench import _norm_impls

    from normbench.norms import get_norm

    chosen = _norm_impls()
    compiled = []
    for norm, impl in chosen:
        built = get_norm(norm).build(impl, 8, eps=1e-5, dtype=torch.float32, device="cpu")
        if getattr(built.fn, "is_compiled", False):
            compiled.append(f"{norm}:{impl}")
    assert not compiled
    assert ("layernorm", "module") in chosen and ("batchnorm", "train") in chosen
    assert not {("batchnorm", "train_compiled"), ("batchnorm", "eval_compiled")} & set(chosen)
