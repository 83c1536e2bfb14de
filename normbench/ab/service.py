"""`normbench ab` as one call: the output file checked before any work, the gate run, the verdict printed
before the result is stored (a store that fails loses no verdict), a signal turned into its exit code. The
command parses and calls `gate`; docs/ci.md says what the marks and exit codes mean."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from normbench.ab.comment import render_comment
from normbench.ab.gate import ABOptions, ABResult, exit_code
from normbench.ab.report import render_json, render_text, verdict_line
from normbench.ab.run import run_ab
from normbench.results.outputs import output_file, write_output_text
from normbench.runner import StopNow

BISECT_SKIP = 125  # `git bisect run`: this commit cannot be tested; neither good nor bad


def render(result: ABResult, fmt: str, *, everything: bool = False) -> str:
    """The result as --format asks: json, md (a pull-request comment) or a table format (github, plain)."""
    if fmt == "json":
        return render_json(result)
    if fmt == "md":
        return render_comment(result)
    return render_text(result, fmt, everything=everything)


def gate(
    base: str,
    suite: str,
    opts: ABOptions,
    *,
    results: Path,
    fmt: str,
    everything: bool = False,
    markdown: Path | None = None,
    bisect: bool = False,
    emit: Callable[[str], None],
    say: Callable[[str], None],
    **selection,
) -> int:
    """Run ab and return its exit code (0 pass, 1 regression, 3 inconclusive or 125 with `bisect`, 128 + the
    signal that stopped it). `emit` prints the result, `say` progress and the verdict line; `selection` is
    run_ab's only / deterministic / all_cases."""
    md = output_file(markdown, "--markdown") if markdown is not None else None  # before any work

    def show(result: ABResult) -> None:
        emit(render(result, fmt, everything=everything))
        if md is not None:
            write_output_text(md, render_comment(result))
        if exit_code(result):
            say(verdict_line(result))

    try:
        result = run_ab(base, suite, opts, results=results, say=say, show=show, **selection)
    except StopNow as stop:
        say(f"ab stopped by {stop.signal.name}: nothing stored")
        return 128 + int(stop.signal)
    code = exit_code(result)
    return BISECT_SKIP if bisect and code == 3 else code
