"""Encoder-decoder stability cases give bit-identical rows under the local and the Ray executor."""

from __future__ import annotations

import pandas as pd
import pytest
from test_ray import read_run, values

# Ray's tests start local clusters over every core: under pytest-xdist they share one worker, in turn.
pytestmark = pytest.mark.xdist_group("ray")

ray = pytest.importorskip("ray")

SUITE = """
name = "encdec-ray"
threads = 1
[[bench]]
kind = "stability"
norms = ["layernorm"]
[bench.sweep]
placement = ["post", "deepnorm"]
[bench.params]
model = "encdec"
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


@pytest.mark.slow  # a Ray cluster starts (about 15 s)
def test_encdec_is_bit_identical_under_ray(tmp_path, normbench_proc):
    (tmp_path / "encdec.toml").write_text(SUITE)
    local = normbench_proc("run", "encdec.toml", "--quiet", "-r", "local")
    assert local.returncode == 0, local.stderr
    remote = normbench_proc(
        "run", "encdec.toml", "--quiet", "-r", "ray", "--executor", "ray", "--jobs", "1", timeout=600
    )
    assert remote.returncode == 0, remote.stderr
    a, b = values(read_run(tmp_path / "local")), values(read_run(tmp_path / "ray"))
    assert a["case_id"].nunique() == 2 and {"enc_update", "dec_update_via_enc"} <= set(a["metric"])
    assert len(a) > 100
    pd.testing.assert_frame_equal(a, b, check_exact=True)
