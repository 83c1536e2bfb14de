"""Fresh worker processes: the one way `run`, `ab` and `selfcheck` time in a new interpreter. Each process
draws its own heap layout and cache state for its whole life, so the process, not the round, is what a rerun
varies by (docs/methodology.md, "Intervals over processes"). A worker reads a JSON plan and writes JSON lines;
a worker that dies (killed, out of memory) is reported with the lines it wrote and why it ended."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from normbench.core.children import die_with_parent


@dataclass
class Fresh:
    """What one worker process left: its JSON lines (in order), exit status and the end of its stderr."""

    lines: list[dict]
    returncode: int
    stderr: str

    @property
    def died(self) -> bool:
        return self.returncode != 0

    @property
    def reason(self) -> str:
        return exit_reason(self.returncode, self.stderr)


def package_parent() -> str:
    """The folder that holds the normbench package this process runs: the workers import the same one."""
    return str(
        Path(__file__).resolve().parents[2]
    )  # normbench/timing/fresh.py -> the folder holding normbench


def worker_env(extra: dict[str, str] | None = None, *, code: str | None = None) -> dict[str, str]:
    """This process's environment, with the normbench it runs (or the one in folder `code`) first on the
    workers' import path."""
    path = os.pathsep.join(filter(None, [code or package_parent(), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **(extra or {})}


def run_fresh(module: str, plan: dict, *, python: str | None = None, env: dict | None = None) -> Fresh:
    """`python -m module PLAN OUT` in a new process (never two at once: the caller waits), PLAN holding
    `plan` as JSON; the lines it wrote to OUT, whole ones only, however it ended."""
    with tempfile.TemporaryDirectory(prefix="normbench-worker-") as tmp:
        plan_path, out_path = Path(tmp) / "plan.json", Path(tmp) / "out.jsonl"
        plan_path.write_text(json.dumps(plan))
        out_path.touch()
        done = subprocess.run(
            [python or sys.executable, "-m", module, str(plan_path), str(out_path)],
            env=env if env is not None else worker_env(),
            capture_output=True,
            text=True,
            check=False,
            # its own session: a Ctrl-C at the terminal reaches the parent, which finishes or stops the
            # worker itself (subprocess.run kills it when the parent stops at once)
            start_new_session=True,
            preexec_fn=die_with_parent(),  # a SIGKILL of the parent (a cancelled CI job) ends the worker too
        )
        lines = []
        for text in out_path.read_text().splitlines():
            try:
                lines.append(json.loads(text))
            except json.JSONDecodeError:  # the line it was writing when it died
                break
    return Fresh(lines, done.returncode, done.stderr or "")


def exit_reason(returncode: int, stderr: str) -> str:
    """Why a worker ended, in one line: the signal that killed it (SIGKILL: most often the kernel's
    out-of-memory killer) or its exit status and the last line it printed."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        hint = " (out of memory?)" if -returncode == signal.SIGKILL else ""
        return f"worker process killed by {name}{hint}"
    tail = (stderr.strip().splitlines() or ["no output"])[-1]
    return f"worker process exited {returncode}: {tail[:300]}"


def write_line(out, record: dict) -> None:
    """One JSON line, flushed: what the parent reads back even if the process dies right after."""
    out.write(json.dumps(record) + "\n")
    out.flush()
