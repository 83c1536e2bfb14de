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
    return Started(module, plan=plan, python=python, env=env).run()


class Started:
    """A fresh worker process. Given its plan at once, `python -m module PLAN OUT`. Started ahead
    (plan=None), `python -m module --wait OUT [ARG...]`: it imports what it needs (torch: ~1.5 s), says
    "ready" on stdout and waits for its plan's path on stdin, so workers started together before the first
    of them times import side by side instead of one after another, and no import runs beside a process
    that is timing. One never given a plan exits when its stdin ends (`close`)."""

    def __init__(
        self,
        module: str,
        *args: str,
        plan: dict | None = None,
        python: str | None = None,
        env: dict | None = None,
    ):
        self._tmp = tempfile.TemporaryDirectory(prefix="normbench-worker-")
        tmp = Path(self._tmp.name)
        self._plan, self._out, self._err = tmp / "plan.json", tmp / "out.jsonl", tmp / "stderr.txt"
        self._out.touch()
        self.ahead = plan is None
        if not self.ahead:
            self._plan.write_text(json.dumps(plan))
        head = ["--wait", str(self._out)] if self.ahead else [str(self._plan), str(self._out)]
        with open(self._err, "w") as err:
            self._proc = subprocess.Popen(
                [python or sys.executable, "-m", module, *head, *args],
                env=env if env is not None else worker_env(),
                stdin=subprocess.PIPE if self.ahead else subprocess.DEVNULL,
                stdout=subprocess.PIPE if self.ahead else subprocess.DEVNULL,
                stderr=err,
                text=True,
                # its own session: a Ctrl-C at the terminal reaches the parent, which finishes or stops the
                # worker itself (close)
                start_new_session=True,
                preexec_fn=die_with_parent(),  # a SIGKILL of the parent (a cancelled CI job) ends the worker too
            )
        self._ready: bool | None = None

    def ready(self) -> bool:
        """Wait until a worker started ahead has done its imports; False when it ended first."""
        if self._ready is None:
            self._ready = self._proc.stdout.readline().strip() == "ready"
        return self._ready

    def run(self, plan: dict | None = None) -> Fresh:
        """Give a worker started ahead its `plan`; wait for the worker to end: the lines it wrote to OUT
        (whole ones only), its exit status and stderr."""
        try:
            if self.ahead:
                self._plan.write_text(json.dumps(plan))
                if self.ready():
                    self._proc.stdin.write(f"{self._plan}\n")
                self._proc.stdin.close()
            self._proc.wait()
            lines = []
            for text in self._out.read_text().splitlines():
                try:
                    lines.append(json.loads(text))
                except json.JSONDecodeError:  # the line it was writing when it died
                    break
            return Fresh(lines, self._proc.returncode, self._err.read_text(errors="replace"))
        finally:
            self.close()

    def close(self) -> None:
        """End it if it still runs (never given a plan, or the parent is stopping); remove its files."""
        if self._proc.poll() is None:
            try:
                if self.ahead and not self._proc.stdin.closed:
                    self._proc.stdin.close()  # a worker waiting for its plan ends at once
                self._proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None and not stream.closed:
                stream.close()
        self._tmp.cleanup()


def worker_args(argv: list[str]) -> tuple[str | None, str, list[str]]:
    """A worker's (PLAN, OUT, rest) from its argv: `PLAN OUT ...`, or, started ahead, `--wait OUT ...`
    (PLAN None: `wait_for_plan` reads it once the worker's imports are done)."""
    if argv[0] == "--wait":
        return None, argv[1], argv[2:]
    return argv[0], argv[1], argv[2:]


def wait_for_plan() -> str | None:
    """In a worker started ahead: say "ready", read the plan's path (None: stdin ended, no plan for it) and
    send later output to /dev/null (nobody reads the pipe any more)."""
    print("ready", flush=True)
    line = sys.stdin.readline().strip()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return line or None


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
