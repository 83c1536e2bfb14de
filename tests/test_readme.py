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


def test_the_command_table_names_every_command_and_the_current_flags():
    """Every command of `normbench` has a row; the README and `run --help` spell the width --d."""
    from typer.testing import CliRunner

    from normbench.cli import _command_modules, app

    text = (REPO / "README.md").read_text()
    table = text.split("## Commands and exit codes")[1].split("\n\n")[1]
    assert [m.NAME for m in _command_modules() if f"`normbench {m.NAME}" not in table] == []
    help_text = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).stdout
    assert "--hidden" not in text and "--hidden" not in help_text and "--d 1024" in help_text


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
    # 30 summary entries at most, each wrapped at the width (never cut): a few more lines
    assert report.returncode == 0 and lines[0] == "Summary" and lines.index("") <= 40
    assert len(lines) <= 80 and max(map(len, lines)) <= 120
    # the answer per shape (its 11 shapes), with words for the direction, within the first 30 lines; a shape
    # whose words do not fit beside its columns has them on the next line, deeper
    first = lines.index(next(line for line in lines if line.startswith("latency    per shape:")))
    shapes: list[str] = []
    for line in lines[first + 1 :]:
        if re.search(r"\d+×\d+", line):
            shapes.append(line)
        elif line.startswith(" " * 13) and shapes:
            shapes[-1] += line
        else:
            break
    assert len(shapes) == 11 and first + 11 + 4 <= 30
    assert all(re.search(r"faster|slower|as fast|the reference", line) for line in shapes)
    titles = [line for line in lines if line.startswith("### ")]
    assert titles[0].startswith("### Norms head to head") and titles[1].startswith("### Latency")
