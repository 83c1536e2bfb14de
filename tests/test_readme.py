"""README.md cannot rot: every ```bash block marked `<!-- runnable -->` runs, in order, as a newcomer would type
it (a fresh folder, NORMBENCH_RESULTS pointing into it, `normbench` on the PATH), and exits 0; the quick suite's
report then fits 80 lines of 120 characters; the README stays within 250 lines and its excerpt fits that width."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, make_child_env

MARKER = "<!-- runnable -->"


def runnable_blocks(text: str) -> list[str]:
    return re.findall(re.escape(MARKER) + r"\s*\n```bash\n(.*?)```", text, re.S)


def test_readme_is_short_and_marks_its_runnable_blocks():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    blocks = runnable_blocks(text)
    assert len(blocks) >= 2 and text.count(MARKER) == len(blocks)  # a marker before anything but a bash block
    assert (
        sum(b.count("normbench run quick") for b in blocks) <= 1
    )  # at most one quick suite: the test stays fast
    excerpt = re.search(r"```text\n(.*?)```", text, re.S).group(1)
    assert excerpt.startswith("Summary\n") and max(map(len, excerpt.splitlines())) <= 120


@pytest.mark.slow
def test_runnable_blocks_run(tmp_path):
    blocks = runnable_blocks((REPO / "README.md").read_text())
    env = make_child_env(NORMBENCH_RESULTS=str(tmp_path / "results"), COLUMNS="120")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    for block in blocks:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, f"README block failed:\n{block}\nstderr:\n{done.stderr[-3000:]}"
    runs = [p for p in (tmp_path / "results").iterdir() if (p / "manifest.json").exists()]
    assert len(runs) == len(re.findall(r"^normbench run ", "\n".join(blocks), re.M))
    # the quick suite's report, as the README promises: at most 80 lines, none over 120 characters
    quick = next(p.name for p in runs if "-quick-" in p.name)
    report = subprocess.run(
        ["normbench", "report", quick], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    lines = report.stdout.splitlines()
    assert report.returncode == 0 and lines[0] == "Summary" and lines.index("") <= 26
    assert len(lines) <= 80 and max(map(len, lines)) <= 120
