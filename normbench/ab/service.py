"""`normbench ab` as one call, as `compare_runs` is for compare: the results folder and NORMBENCH_PAGES
checked before any work, the gate run, its answer rendered (text, notes, exit code, the pull-request
comment) and the result stored; a store that fails is said after the verdict, which is never lost. The
command parses, calls `gate` and prints; docs/ci.md says what the marks and exit codes mean."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from normbench.ab.comment import render_comment
from normbench.ab.gate import ABResult, exit_code
from normbench.ab.guard import ab_folder, store_exclusive
from normbench.ab.options import ABOptions
from normbench.ab.report import render_json, render_text, verdict_line
from normbench.ab.run import run_ab
from normbench.core.errors import NormbenchError
from normbench.core.verdicts import INCONCLUSIVE
from normbench.results.outputs import output_file, write_output_text
from normbench.runner import StopNow
from normbench.timing.pages import check_pages

BISECT_SKIP = 125  # `git bisect run`: this commit cannot be tested; neither good nor bad


@dataclass
class ABAnswer:
    text: str  # for stdout, as is
    notes: list[str]  # for stderr, after the text
    exit_code: int
    error: Exception | None = None  # --markdown or the result not written: said after the text, exit 2


def render(result: ABResult, fmt: str, *, everything: bool = False) -> str:
    """The result as --format asks: json, md (a pull-request comment) or a table format (github, plain)."""
    if fmt == "json":
        return render_json(result)
    if fmt == "md":
        return render_comment(result)
    return render_text(result, fmt, everything=everything)


def gate(base: str, suite: str, opts: ABOptions, say: Callable[[str], None]) -> ABAnswer:
    """ab's answer: exit 0 pass, 1 regression, 3 inconclusive (125 with `opts.bisect`), 128 + the signal that
    stopped it. `say` gets the progress lines as they come."""
    md = output_file(opts.markdown, "--markdown") if opts.markdown is not None else None  # before any work
    check_pages(None)  # NORMBENCH_PAGES: every worker reads it
    folder = ab_folder(opts.results)  # writable, and in no stored run, before any work
    try:
        result = run_ab(base, suite, opts, say=say)
    except StopNow as stop:
        return ABAnswer("", [f"ab stopped by {stop.signal.name}: nothing stored"], 128 + int(stop.signal))
    code = exit_code(result)
    answer = ABAnswer(
        render(result, opts.fmt, everything=opts.everything),
        [verdict_line(result)] if code else [],
        BISECT_SKIP if opts.bisect and code == INCONCLUSIVE else code,
    )
    try:  # after the answer is made: a file that cannot be written loses no verdict
        if md is not None:
            write_output_text(md, render_comment(result))
        store_exclusive(
            folder, f"{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{result.base_commit[:8]}", result
        )
    except (NormbenchError, OSError) as exc:
        answer.error = exc
    return answer
