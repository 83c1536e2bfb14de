"""A tiny stability + init suite runs end to end through the CLI, stores time series with steps and layers, and reports its tables."""

from typer.testing import CliRunner

from normbench.cli import app

SUITE = """
name = "tiny-stability"
[[bench]]
kind = "stability"
norms = ["layernorm"]
[bench.sweep]
placement = ["post", "pre", "deepnorm"]
[bench.params]
init = "xavier"
depth = 2
d = 16
ffn = 32
seq = 16
batch = 4
steps = 6
every = 3
eval_batches = 1
data = "markov"

[[bench]]
kind = "init"
norms = ["layernorm"]
[bench.sweep]
placement = ["post", "pre"]
depth = [1, 2]
[bench.params]
d = 16
ffn = 32
seq = 16
batch = 4
batches = 2
jacobian_tokens = 4
data = "markov"
"""


def test_tiny_suite_runs_and_reports(tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE)
    runner = CliRunner()
    result = runner.invoke(
        app, ["run", str(suite), "--results", str(tmp_path / "r"), "--quiet", "--threads", "1"]
    )
    assert result.exit_code == 0, result.output
    report = runner.invoke(app, ["report", "latest", "--full", "--results", str(tmp_path / "r")])
    assert report.exit_code == 0, report.output
    text = report.output
    for title in (
        "Stability: final loss, status, step-1 model update, last-LN input norm",
        "Init: residual stream ‖x_l‖²/d per layer",
        "Init: last layer's W² gradient",
    ):
        assert title in text
    assert "Lemma 2 band (Pre-LN)" in text and "L=1" in text and "L=2" in text
    for placement in ("post", "pre", "deepnorm"):
        assert f"| {placement}" in text
