"""What `normbench ab BASE [SUITE]` does below its options: the suite's cases, the base commit in a
temporary worktree, k worker processes timing base against head (ab/gate.py), and the suite's deterministic
benches run once at base and once at head and compared by value (as `compare` does). --base-python is
checked before the worktree is made; a signal ends the children and removes the worktree (ab/guard.py).
Threads and the page state are resolved as `run` resolves them, and reach every worker."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from normbench.ab.gate import (
    SAME_CODE,
    ABCase,
    ABResult,
    judge_with_second_look,
    run_workers,
    spread_summary,
    timed_cases,
)
from normbench.ab.guard import check_python, stop_on_signal
from normbench.ab.options import ABOptions
from normbench.ab.sides import (
    ABUnsupported,
    base_worktree,
    changed_norms,
    check_base,
    check_head,
    git,
    load_base_norms,
    repo_root,
)
from normbench.analysis.compare.options import CompareOptions
from normbench.analysis.rows import describe_case, shown_params, varying_params
from normbench.benches import get_bench
from normbench.core.children import die_with_parent
from normbench.core.errors import NormbenchError
from normbench.core.jsondata import finite_or_none
from normbench.results.store import RunStore
from normbench.suite.catalog import resolve
from normbench.suite.expand import expand, select
from normbench.suite.load import load_suite
from normbench.timing.fresh import worker_env
from normbench.timing.pages import chosen_state


def run_ab(base: str, suite_name: str, opts: ABOptions, *, say: Callable[[str], None] = print) -> ABResult:
    """The suite's cases at base against head, as `opts` asks (--all-cases: also those whose norms' code is
    the same at both). The caller checks the results folder first and stores the result."""
    start = time.perf_counter()
    root = repo_root(Path.cwd())
    check_head(root)
    suite_path = resolve(suite_name)
    suite = load_suite(suite_path)
    cases = select(expand(suite), opts.only)
    timed = timed_cases(cases)
    if not timed and not opts.deterministic:
        raise NormbenchError(f"suite {suite.name!r} has no latency or block case to time")
    # resolved as `run` resolves them: the option, else the suite's (pages: NORMBENCH_PAGES first)
    opts = replace(opts, threads=opts.threads or suite.threads)
    pages = chosen_state(None, suite=suite.pages)
    labels = _labels(timed)
    if opts.base_python:
        check_python(opts.base_python)
    with stop_on_signal(say), base_worktree(root, base) as (commit, tree):
        if not opts.base_python:
            check_base(root, tree, base)
        if timed and not opts.base_python:
            try:
                load_base_norms(root, tree)  # fail here, with the reason, before any process starts
            except ABUnsupported as exc:
                raise NormbenchError(
                    f"{exc}; time the two sides in alternating processes with --base-python"
                ) from exc
        records, det_exit = ([], 0)
        if (
            opts.deterministic
        ):  # first: its two runs go side by side, and must not overlap the timing processes
            records, det_exit = _deterministic(suite_path, cases, tree, opts, say)
        same = [] if opts.all_cases or opts.base_python else unchanged_cases(timed, changed_norms(root, tree))
        if same:
            say(
                f"{len(same)} of {len(timed)} cases run the same norm code at base and head: not timed (--all-cases)"
            )
        to_time = [c for c in timed if c not in same]
        where = None if opts.base_python else tree

        def time_them(cases, say_first: str = ""):
            if say_first:
                say(say_first)
            progress = _progress(say, start, opts.processes)
            return run_workers(cases, root=root, tree=where, opts=opts, pages=pages, say=progress)

        runs = time_them(to_time) if to_time else []

        def retime(unsure):
            return time_them(
                unsure,
                f"second look: {len(unsure)} inconclusive cases timed in {opts.processes} more processes",
            )

        rows, looked = judge_with_second_look(to_time, labels, runs, opts, retime)
    spread, widest = spread_summary(rows)
    rows += [ABCase(c.case_id, c.kind, labels[c.case_id], mark="=", note=SAME_CODE) for c in same]
    for row, c in zip(rows, to_time + same, strict=True):
        row.name, row.params = _short(c)
    return ABResult(
        base=base,
        base_commit=commit,
        head=_head_name(root),
        mode="processes" if opts.base_python else "in-process",
        factor=opts.factor,
        stat=opts.stat,
        processes=opts.processes,
        second_look=looked,
        aa_spread=spread,
        max_spread=widest,
        cases=rows,
        wall_s=time.perf_counter() - start,
        deterministic=records,
        deterministic_exit=det_exit,
    )


def _progress(say: Callable[[str], None], start: float, total: int) -> Callable[[str], None]:
    """run_workers' "process i/k" lines with the time since ab started and an estimate of what is left
    (the mean time of the processes done so far, times those to go)."""
    first = time.perf_counter()
    done = 0

    def report(line: str) -> None:
        nonlocal done
        if line.startswith("process "):
            now = time.perf_counter()
            left = f", about {(now - first) / done * (total - done):.0f} s to go" if done else ""
            line = f"{line} ({now - start:.0f} s elapsed{left})"
            done += 1
        say(line)

    return report


def unchanged_cases(cases, changed: set[str] | None) -> list:
    """The cases none of whose norms' code changed (changed: the changed norms; None = every norm)."""
    if changed is None:
        return []
    return [c for c in cases if not (get_bench(c.kind).case_norms(c) & changed)]


def _labels(cases) -> dict[str, str]:
    import pandas as pd

    varying = varying_params(pd.Series([json.dumps(c.params, sort_keys=True, default=str) for c in cases]))
    return {c.case_id: describe_case(c.norm, c.impl, c.params, get_bench(c.kind), varying) for c in cases}


def _short(case) -> tuple[str, dict]:
    """norm:impl (or the bench's name) and the parameters that differ from the bench's defaults."""
    params = shown_params(case.params, get_bench(case.kind))
    return (f"{case.norm}:{case.impl}" if isinstance(case.norm, str) else case.kind), params


def _head_name(root: Path) -> str:
    commit = git("rev-parse", "--short", "HEAD", cwd=root)
    dirty = bool(git("status", "--porcelain", "--untracked-files=no", cwd=root))
    return f"{commit}{' + uncommitted changes' if dirty else ''}"


def _deterministic(suite_path: Path, cases, tree: Path, opts: ABOptions, say) -> tuple[list[dict], int]:
    """The suite's other benches run at base and at head, compared by value: (compare's records, exit)."""
    from normbench.analysis.compare.frames import compare_frames
    from normbench.analysis.compare.verdict import comparison_records, exit_code

    kinds = sorted({c.kind for c in cases if not get_bench(c.kind).times_sides})
    if not kinds:
        return [], 0
    only = [arg for k in kinds for arg in ("--only", f"{k} *")]
    say(f"deterministic benches ({', '.join(kinds)}) at base and at head, side by side (values, not times)")
    with tempfile.TemporaryDirectory(prefix="normbench-ab-det-") as tmp:
        started: dict[str, subprocess.Popen] = {}
        try:
            stores = _run_sides(started, suite_path, only, tree, opts, tmp)
        finally:  # a signal or a failed side: no `normbench run` goes on writing into a folder being removed
            for proc in started.values():
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        b, n = stores["base"], stores["head"]
        result = compare_frames(
            b.read(),
            n.read(),
            b.manifest.get("env", {}),
            n.manifest.get("env", {}),
            CompareOptions(factor=opts.factor),
        )
        return finite_or_none(comparison_records(result.rows).to_dict("records")), exit_code(result)


def _run_sides(started: dict, suite_path: Path, only: list[str], tree: Path, opts: ABOptions, tmp: str):
    """`normbench run` of the deterministic cases at base and at head, side by side: {side: its store}.
    Each process is put in `started` as it starts, for the caller to end."""
    for side, python, path in (
        ("base", opts.base_python or sys.executable, tree),
        ("head", sys.executable, None),
    ):
        env = worker_env(code=None if path is None or opts.base_python else str(path))
        cmd = [
            python,
            "-c",
            "from normbench.cli import main; main()",
            "run",
            str(suite_path.resolve()),
            *only,
        ]
        cmd += [
            "--quiet",
            "--results",
            str(Path(tmp) / side),
            *(["--threads", str(opts.threads)] if opts.threads else []),
        ]
        started[side] = subprocess.Popen(
            cmd,
            env=env,
            cwd=path or Path.cwd(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=die_with_parent(),
        )
    stores = {}
    for side, proc in started.items():
        _, stderr = proc.communicate()
        if proc.returncode not in (0, 1):  # 1: a case failed, which compare reports
            tail = (stderr.strip().splitlines() or ["no output"])[-1]
            raise NormbenchError(
                f"the deterministic benches at {side} did not run (exit {proc.returncode}): {tail}"
            )
        stores[side] = RunStore.open(Path(tmp) / side, "latest")
    return stores
