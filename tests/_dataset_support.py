"""A run of every bench kind (and a latency-only run sharing 4 of its cases), shared by the dataset and
report-data tests through the `dataset_runs` fixture in conftest.py."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from normbench.cli import app

LATENCY = """
[[bench]]
kind = "latency"
norms = ["layernorm:module", "rmsnorm:module"]
[bench.sweep]
d = [16, 32]
[bench.params]
tokens = 8
samples = 3
warmup_calls = 0
min_sample_s = 1e-4
min_run_s = 0
copy_probe = false
"""

# Every bench kind, each at its cheapest: the point is the columns, not the numbers.
MIXED = (
    'name = "mixed"\n'
    + LATENCY
    + """
[[bench]]
kind = "block"
[bench.sweep]
block = ["linear", "layernorm"]
[bench.params]
tokens = 8
d = 16
samples = 3
warmup_calls = 0
min_sample_s = 1e-4

[[bench]]
kind = "jacobian"
norms = ["layernorm"]
[bench.params]
d = 4
inputs = 2

[[bench]]
kind = "init"
norms = ["layernorm"]
[bench.params]
depth = 1
d = 16
ffn = 32
seq = 16
batch = 4
batches = 1
jacobian_tokens = 4
data = "markov"

[[bench]]
kind = "stability"
norms = ["layernorm"]
[bench.params]
depth = 1
d = 16
ffn = 32
seq = 16
batch = 4
steps = 2
every = 1
eval_batches = 1
data = "markov"
"""
)
KINDS = ["latency", "block", "jacobian", "init", "stability"]


def run_suite(root: Path, name: str, text: str) -> str:
    """Run a suite file written from `text` under root/results; its run id."""
    suite = root / f"{name}.toml"
    suite.write_text(text)
    before = set(p.name for p in (root / "results").glob("*")) if (root / "results").exists() else set()
    args = ["run", str(suite), "--quiet", "--threads", "1", "--results", str(root / "results")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    (run_id,) = {p.name for p in (root / "results").glob("*")} - before
    return run_id
