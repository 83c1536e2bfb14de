"""`--help`, `list`, `validate` and `run --dry-run` import no torch, numpy, pandas or pyarrow (the validation path reads
norm and bench modules for their parameter specs only), so they answer in well under a second."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO

PROBE = """
import contextlib, io, json, sys
from normbench.cli import app
codes = []
for args in ({commands}):
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            app(args)
        except SystemExit as exc:
            codes.append(exc.code)
heavy = sorted(m for m in ("torch", "numpy", "pandas", "pyarrow", "scipy", "matplotlib", "ray") if m in sys.modules)
print(json.dumps({{"codes": codes, "heavy": heavy}}))
"""


def test_list_validate_and_dry_run_stay_torch_free(child_env, tmp_path):
    suite = str(REPO / "suites" / "quick.toml")
    commands = [["--help"], ["list"], ["list", "benches"], ["validate", suite], ["run", suite, "--dry-run"]]
    code = PROBE.format(commands=json.dumps(commands))
    env = child_env(NORMBENCH_RESULTS=str(tmp_path / "results"))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    probe = json.loads(proc.stdout.strip().splitlines()[-1])
    assert probe["codes"] == [0, 0, 0, 0, 0], proc.stderr
    assert probe["heavy"] == [], probe
